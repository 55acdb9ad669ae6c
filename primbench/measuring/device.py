"""The GPU: identity, clocks and peak bandwidth from NVML, shape from CuPy, clock state per case."""

from __future__ import annotations

from primbench.errors import NoGPUError
from primbench.runfile import stats

# NVML clock-event ("throttle") reasons, by bit. GPU idle, application clocks and SW power cap
# are routine; the others mean the clocks were pulled down by heat or hardware.
CLOCK_EVENT_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
    0x100: "display_clocks",
}
THROTTLING_REASONS = {"hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake"}
LOW_CLOCK_FRACTION = 0.75  # nvbench treats samples under 75 % of the default SM clock as throttled


def no_gpu_hint() -> str:
    """'no NVIDIA GPU here; to see a real run, render the bundled one: make report' (or, for a pip
    user, `primbench report --reference`)."""
    from primbench.resources import render_the_reference_hint

    return f"no NVIDIA GPU here; {render_the_reference_hint()}"


def _nvml():
    """pynvml, initialised; NoGPUError when there is no driver or no GPU."""
    try:
        import pynvml
    except ImportError:
        raise NoGPUError(f"nvidia-ml-py is not installed and {no_gpu_hint()}") from None
    try:
        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
    except pynvml.NVMLError:
        raise NoGPUError(no_gpu_hint()) from None
    if count == 0:
        raise NoGPUError(no_gpu_hint())
    return pynvml


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _optional(read):
    """A reading some GPUs or VMs refuse: None instead of an error."""
    import pynvml

    try:
        return read()
    except pynvml.NVMLError:
        return None


def require_gpu() -> None:
    """Fail with one line when no NVIDIA GPU is usable."""
    _nvml()


def _open_with_cupy(index: int) -> tuple[dict, str, int]:
    """(CUDA's device properties, the PCI bus id, the runtime version) through CuPy; the device is
    made current."""
    try:
        import cupy
    except ImportError:
        raise NoGPUError("CuPy is not installed; `make bench` installs the wheel for this driver's CUDA "
                         "(by hand: pip install 'primbench[cuda13]', or [cuda12])") from None
    try:
        device = cupy.cuda.Device(index)
        device.use()
        return cupy.cuda.runtime.getDeviceProperties(index), device.pci_bus_id, cupy.cuda.runtime.runtimeGetVersion()
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        raise NoGPUError(f"CUDA cannot open GPU {index} ({exc}); {no_gpu_hint()}") from None


def _open_with_torch(index: int) -> tuple[dict, str | None, int]:
    """The same through PyTorch, its properties under CUDA's names (what _describe reads)."""
    import torch

    p = torch.cuda.get_device_properties(index)
    props = {"name": p.name, "major": p.major, "minor": p.minor, "multiProcessorCount": p.multi_processor_count,
             "maxThreadsPerMultiProcessor": p.max_threads_per_multi_processor, "totalGlobalMem": p.total_memory,
             "l2CacheSize": getattr(p, "L2_cache_size", 50 << 20),
             "sharedMemPerBlockOptin": getattr(p, "shared_memory_per_block_optin", 48 * 1024)}
    domain, bus, device = (getattr(p, f"pci_{part}_id", None) for part in ("domain", "bus", "device"))
    bus_id = f"{domain:08X}:{bus:02X}:{device:02X}.0" if None not in (domain, bus, device) else None
    major, minor = (int(part) for part in (torch.version.cuda or "0.0").split(".")[:2])
    return props, bus_id, major * 1000 + minor * 10


class Device:
    """The GPU a run measures: static identity (`info`) and per-case clock readings (`clock_state`)."""

    def __init__(self, index: int = 0, through: str = "cupy"):
        """GPU `index`, opened through CuPy, or through PyTorch alone (`through="torch"`: a torch
        callable timed by primbench.measure where CuPy is not installed)."""
        self.pynvml = _nvml()
        props, bus_id, runtime = _open_with_torch(index) if through == "torch" else _open_with_cupy(index)
        try:
            self.handle = self.pynvml.nvmlDeviceGetHandleByPciBusId(bus_id) if bus_id else None
        except self.pynvml.NVMLError:  # bus-id spellings differ between CUDA and NVML on some hosts
            self.handle = None
        self.handle = self.handle or self.pynvml.nvmlDeviceGetHandleByIndex(index)
        self.pci_bus_id = bus_id
        self.info = self._describe(props, runtime)

    @property
    def sm_count(self) -> int:
        return self.info["sm_count"]

    @property
    def sm_limits(self) -> dict:
        """Resident threads and blocks per SM, for grids sized to one full wave, and the shared memory
        a block may opt in to."""
        return {"threads_per_sm": self.info["max_threads_per_sm"], "blocks_per_sm": self.info["max_blocks_per_sm"],
                "shared_per_block_optin": self.info["shared_per_block_optin_bytes"]}

    @property
    def l2_bytes(self) -> int:
        return self.info["l2_bytes"]

    def _describe(self, props: dict, runtime: int) -> dict:
        nvml, handle = self.pynvml, self.handle
        max_mem = nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_MEM)
        bus_width = nvml.nvmlDeviceGetMemoryBusWidth(handle)
        cuda_driver = nvml.nvmlSystemGetCudaDriverVersion()
        return {
            "name": _text(props["name"]),
            "uuid": _text(nvml.nvmlDeviceGetUUID(handle)),
            "pci_bus_id": self.pci_bus_id,
            "compute_capability": f"{props['major']}.{props['minor']}",
            "sm_count": int(props["multiProcessorCount"]),
            "max_threads_per_sm": int(props["maxThreadsPerMultiProcessor"]),
            "max_blocks_per_sm": int(props.get("maxBlocksPerMultiProcessor", 32)),
            "shared_per_block_optin_bytes": int(props.get("sharedMemPerBlockOptin", 48 * 1024)),
            "l2_bytes": int(props["l2CacheSize"]),
            "memory_bytes": int(props["totalGlobalMem"]),
            "max_sm_clock_mhz": nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM),
            # The clock a sample's must reach (nvbench's reference for a throttled sample).
            "default_sm_clock_mhz": _optional(lambda: nvml.nvmlDeviceGetDefaultApplicationsClock(handle, nvml.NVML_CLOCK_SM)),
            "max_mem_clock_mhz": max_mem,
            "bus_width_bits": bus_width,
            "peak_gbps": round(stats.peak_gbps(max_mem, bus_width), 1),
            "driver": _text(nvml.nvmlSystemGetDriverVersion()),
            "cuda_driver": f"{cuda_driver // 1000}.{cuda_driver % 1000 // 10}",
            "cuda_runtime": f"{runtime // 1000}.{runtime % 1000 // 10}",
            "power_limit_w": _optional(lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0),
        }

    def clock_state(self) -> dict:
        """SM and memory clocks, clock-event reasons, temperature and power, read now."""
        nvml, handle = self.pynvml, self.handle
        state = {}
        try:
            state["sm_clock_mhz"] = nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)
            state["mem_clock_mhz"] = nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM)
            # Renamed from ...ClocksThrottleReasons in newer NVML; accept either.
            reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
            mask = reasons(handle)
            state["reasons_mask"] = mask
            state["reasons"] = [name for bit, name in CLOCK_EVENT_REASONS.items() if mask & bit]
            state["temperature_c"] = nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)
            state["power_w"] = nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
        except nvml.NVMLError as exc:  # some fields are not readable on every GPU or VM
            state["error"] = str(exc)
        return state

    def clock_flags(self, state: dict) -> list[str]:
        """Flags for a record whose clocks were pulled down while it ran."""
        flags = []
        if THROTTLING_REASONS & set(state.get("reasons", [])):
            flags.append("throttled")
        sm = state.get("sm_clock_mhz")
        if sm and sm < LOW_CLOCK_FRACTION * self.info["max_sm_clock_mhz"]:
            flags.append("clock_low")
        return flags

    def free_memory(self) -> int:
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
        free, _total = cupy.cuda.runtime.memGetInfo()
        return free

    def other_processes(self) -> list[int]:
        """PIDs of other compute processes on this GPU (their work would disturb the timings)."""
        import os

        try:
            procs = self.pynvml.nvmlDeviceGetComputeRunningProcesses(self.handle)
        except self.pynvml.NVMLError:
            return []
        return [p.pid for p in procs if p.pid != os.getpid()]


def software_versions() -> dict:
    """Versions of what produced the numbers."""
    import platform

    import numpy

    versions = {"python": platform.python_version(), "numpy": numpy.__version__}
    try:
        import cupy
        from cupy.cuda import nvrtc

        versions["cupy"] = cupy.__version__
        major, minor = nvrtc.getVersion()
        versions["nvrtc"] = f"{major}.{minor}"
    except Exception as exc:  # noqa: BLE001 (recorded, not fatal: the header says what was missing)
        versions["cupy"] = f"unavailable: {exc}"
    try:
        from importlib.metadata import version

        versions["nvidia-ml-py"] = version("nvidia-ml-py")
    except Exception:  # noqa: BLE001
        pass
    from primbench.libraries import installed_versions

    versions.update(installed_versions())  # the baselines' optional libraries: cuda-cccl, torch, flashinfer-python
    return versions
