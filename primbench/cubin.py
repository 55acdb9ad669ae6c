"""A CUDA cubin (the ELF64 file NVRTC writes) read in pure Python: what decides a kernel's GPU work,
apart from what only describes the build. primbench/machine_code.py hashes it; no CUDA tool or GPU
is needed, so CI tests it.

What `kernel_code` gives for one kernel:
- its instructions (`.text.<kernel>`) and the relocations the loader patches into them, each by the
  name of the symbol it points at (an index moves when another kernel is added to the file);
- its static shared memory (the size of `.nv.shared.<kernel>`), and the attributes ptxas writes
  that set how many of its blocks fit on an SM or how it may be launched: registers, stack frame,
  launch bounds, named barriers, cluster shape (LAUNCH_ATTRIBUTES, FUNCTION_ATTRIBUTES).
What `module_data` gives for the whole file: the code and data any kernel of it may reach without
naming it in its own sections: device functions that were not inlined (a `.text` section of no
kernel), initialised globals (`.nv.global.init`) and the constant banks besides the parameters'
(`.nv.constant1` and up), with their relocations.
Left out, as metadata: the CUDA API version and other attributes (`.nv.info` records not named
below: the EXIT offsets and the like are derived from the instructions, which are covered), the
notes naming the toolkit, debug and line information, and the order of sections and symbols. So
a compiler upgrade that emits the same instructions is no code change.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

SHT_NOBITS, SHT_RELA, SHT_REL = 8, 4, 9
STT_FUNC, STO_CUDA_ENTRY = 2, 0x10  # a function symbol, and st_other's mark of a kernel (an entry point)
# .nv.info records: a format byte, an attribute byte, then a 16-bit value, or (format 4, EIFMT_SVAL)
# the size of the payload that follows.
EIFMT_SVAL = 4
# The per-kernel attributes (.nv.info.<kernel>) that set how a kernel may be launched or how many
# of its blocks fit on an SM (codes as cuobjdump -elf names them).
LAUNCH_ATTRIBUTES = {0x05: "max threads", 0x10: "required threads", 0x1B: "max registers", 0x32: "shared scratch",
                     0x38: "mbarriers", 0x3D: "CTAs per cluster", 0x3E: "explicit cluster", 0x3F: "max cluster rank",
                     0x4C: "named barriers"}
# The module's attributes (.nv.info) that ptxas writes per function, naming it by symbol index.
FUNCTION_ATTRIBUTES = {0x2F: "registers", 0x11: "frame bytes", 0x12: "min stack bytes", 0x23: "max stack bytes"}


class NotACubin(ValueError):
    """The bytes are not a 64-bit little-endian ELF file, or one of its tables runs past the end."""


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    offset: int
    size: int
    link: int
    info: int

    def body(self, data: bytes) -> bytes:
        return b"" if self.type == SHT_NOBITS else data[self.offset:self.offset + self.size]


class Cubin:
    """A cubin's sections, symbols, relocations and .nv.info attributes."""

    def __init__(self, data: bytes):
        if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise NotACubin("not a 64-bit little-endian ELF file")
        self.data = bytes(data)
        try:
            self.sections = self._sections()
            self.by_name = {s.name: s for s in self.sections}
            symtab = next((s for s in self.sections if s.name == ".symtab"), None)
            self.symbols, self.kernels = self._symbols(symtab) if symtab else ([], [])
        except (struct.error, IndexError, ValueError) as exc:
            raise NotACubin(f"a table runs past the end of the file ({exc})") from None

    def _sections(self) -> list[Section]:
        (offset,) = struct.unpack_from("<Q", self.data, 0x28)
        entry_size, count, names_index = struct.unpack_from("<HHH", self.data, 0x3A)
        raw = [struct.unpack_from("<IIQQQQIIQQ", self.data, offset + i * entry_size) for i in range(count)]
        names_at = raw[names_index][4]
        return [Section(self._text(names_at + r[0]), r[1], r[4], r[5], r[6], r[7]) for r in raw]

    def _text(self, at: int) -> str:
        end = self.data.index(b"\0", at)
        return self.data[at:end].decode("utf-8", "replace")

    def _symbols(self, symtab: Section) -> tuple[list[str], list[str]]:
        """(every symbol's name, by index; the names of the kernels, sorted)."""
        names_at = self.sections[symtab.link].offset
        names, kernels = [], []
        for i in range(symtab.size // 24):
            name_at, info, other = struct.unpack_from("<IBB", self.data, symtab.offset + i * 24)
            names.append(self._text(names_at + name_at))
            if info & 0xF == STT_FUNC and other & STO_CUDA_ENTRY:
                kernels.append(names[-1])
        return names, sorted(kernels)

    def symbol(self, index: int) -> str:
        return self.symbols[index] if 0 <= index < len(self.symbols) else f"#{index}"

    def relocations(self, target: str) -> list[tuple]:
        """(offset, type, symbol name, addend) of each relocation applied to section `target`."""
        found = []
        for section in self.sections:
            if section.type not in (SHT_RELA, SHT_REL) or section.name not in (f".rela{target}", f".rel{target}"):
                continue
            size = 24 if section.type == SHT_RELA else 16
            for at in range(section.offset, section.offset + section.size - size + 1, size):
                offset, info = struct.unpack_from("<QQ", self.data, at)
                addend = struct.unpack_from("<q", self.data, at + 16)[0] if size == 24 else 0
                found.append((offset, info & 0xFFFFFFFF, self.symbol(info >> 32), addend))
        return sorted(found)

    def attributes(self, section_name: str) -> list[tuple[int, bytes]]:
        """(attribute, value) of each record of an .nv.info section; a value is its raw bytes."""
        section = self.by_name.get(section_name)
        body = section.body(self.data) if section else b""
        records, at = [], 0
        while at + 4 <= len(body):
            fmt, attribute, value = struct.unpack_from("<BBH", body, at)
            if fmt == EIFMT_SVAL:
                records.append((attribute, body[at + 4:at + 4 + value]))
                at += 4 + value
            else:
                records.append((attribute, struct.pack("<H", value)))
                at += 4
        return records

    def function_attributes(self, symbol: str) -> list[tuple[str, int]]:
        """FUNCTION_ATTRIBUTES of one function, from the module's .nv.info (records name it by index)."""
        found = []
        for attribute, value in self.attributes(".nv.info"):
            if attribute in FUNCTION_ATTRIBUTES and len(value) == 8:
                index, amount = struct.unpack("<II", value)
                if self.symbol(index) == symbol:
                    found.append((FUNCTION_ATTRIBUTES[attribute], amount))
        return sorted(found)

    def kernel_code(self, kernel: str) -> bytes:
        """What decides one kernel's GPU work (see the module's docstring), as bytes to hash; `kernel`
        is its lowered (mangled) name. A KeyError where the cubin has no such kernel."""
        text = self.by_name[f".text.{kernel}"]
        shared = self.by_name.get(f".nv.shared.{kernel}")
        launch = sorted((LAUNCH_ATTRIBUTES[a], v.hex()) for a, v in self.attributes(f".nv.info.{kernel}")
                        if a in LAUNCH_ATTRIBUTES)
        parts = (text.body(self.data).hex(), self.relocations(text.name), shared.size if shared else 0, launch,
                 self.function_attributes(kernel))
        return repr(parts).encode()

    def module_data(self) -> bytes:
        """The code and data of the whole file that no kernel's own sections hold, as bytes to hash:
        device functions that were not inlined, initialised globals, constant banks besides the
        parameters', each with its relocations."""
        kernel_sections = {f".text.{k}" for k in self.kernels}
        parts = []
        for section in sorted(self.sections, key=lambda s: s.name):
            name = section.name
            device_function = name.startswith(".text.") and name not in kernel_sections
            data = name == ".nv.global.init" or (name.startswith(".nv.constant") and not name.startswith(".nv.constant0"))
            if device_function or data:
                extra = self.function_attributes(name.removeprefix(".text.")) if device_function else []
                parts.append((name, section.size, section.body(self.data).hex(), self.relocations(name), extra))
        return repr(parts).encode()


def code_digest(cubin: bytes, kernels) -> dict[str, str]:
    """{lowered kernel name: sha256 of its code}, and under "" the module's data, for the named kernels."""
    parsed = Cubin(cubin)
    digests = {kernel: hashlib.sha256(parsed.kernel_code(kernel)).hexdigest() for kernel in kernels}
    digests[""] = hashlib.sha256(parsed.module_data()).hexdigest()
    return digests
