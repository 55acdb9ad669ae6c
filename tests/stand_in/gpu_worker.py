"""A stand-in for one GPU's worker: primbench/run/worker.py's own loop (the job, the records, the
telemetry, the signals, a lost context) over a stand-in GPU that writes case records without one.

What it does is set by the environment, per CUDA_VISIBLE_DEVICES entry (the GPU it was given):
  STAND_IN_DELAY=0.05            seconds per case
  STAND_IN_SLOW=1:1.2            the GPU '1' takes 1.2x as long
  STAND_IN_CRASH=1:3             the GPU '1' worker kills itself (SIGKILL) after 3 cases, half a line
                                 already in its pipe
  STAND_IN_LOSE_CONTEXT=0:2      the GPU '0' worker's third case breaks its CUDA context, once
                                 (STAND_IN_MARKS names a folder that remembers it happened)
  STAND_IN_HANG=0:2              the GPU '0' worker's third case never returns, once (STAND_IN_MARKS
                                 remembers it): a kernel that spins forever
  STAND_IN_UUID_PREFIX=GPU-x-    another host's GPUs
  STAND_IN_IDLE_W=0:120,1:140    the GPU '0' idles at 120 W: its header says energy was measured, and
                                 every case gets one window of 100 J over 1000 operations in 0.5 s
                                 (200 W, 0.5 ms each)
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from primbench import registry  # noqa: E402
from primbench.run.runner import ContextLost  # noqa: E402
from primbench.run.worker import main  # noqa: E402
from primbench.runfile import protocol  # noqa: E402
from primbench.runfile.records import CaseRecord, RunHeader, Samples  # noqa: E402

VISIBLE = os.environ.get("CUDA_VISIBLE_DEVICES", "0")


def _setting(name: str) -> str | None:
    """The value of NAME=<gpu>:<value> for this worker's GPU."""
    for item in os.environ.get(name, "").split(","):
        gpu, _, value = item.partition(":")
        if gpu == VISIBLE:
            return value
    return None


class StandInDevice:
    def __init__(self):
        self.info = {"name": "Stand-in GPU", "uuid": os.environ.get("STAND_IN_UUID_PREFIX", "GPU-stand-in-") + VISIBLE,
                     "pci_bus_id": f"0000:0{VISIBLE}:00.0", "peak_gbps": 1000.0, "l2_bytes": 1 << 20, "sm_count": 8,
                     "max_sm_clock_mhz": 1000}

    def other_processes(self) -> list[int]:
        return []

    def clock_state(self) -> dict:
        return {"sm_clock_mhz": 990, "mem_clock_mhz": 2000, "reasons_mask": 0, "reasons": [], "temperature_c": 40 + int(VISIBLE),
                "power_w": 100.0}


class StandInRunner:
    def __init__(self, config):
        self.config = config
        self.device = StandInDevice()
        self.sent = 0

    def header(self, run_id: str, variants_used: list, cases=()) -> RunHeader:
        return RunHeader(run_id=run_id, started="2026-12-01T00:00:00+00:00", tool={"name": "primbench", "version": "stand-in"},
                         git={"sha": None, "dirty": None, "source": "none"}, config_path=self.config.path,
                         config_hash=self.config.hash(), config=self.config.resolved(), host={"hostname": "stand-in-host"},
                         device=self.device.info, copy={"n": 1, "bytes": 2e9, "method": "stand-in", "samples_ms": [2.0]},
                         timing=self.config.timing.as_dict(), variants={v.key: v.describe() for v in variants_used},
                         energy=_header_energy(), protocol=protocol.declared())

    def run_case(self, case, rng_seed: int) -> CaseRecord:
        time.sleep(float(os.environ.get("STAND_IN_DELAY", "0")))
        crash = _setting("STAND_IN_CRASH")
        if crash is not None and self.sent >= int(crash):
            fd = int(sys.argv[sys.argv.index("--records-fd") + 1])
            os.write(fd, b'{"kind":"case","key":"half a li')
            os.kill(os.getpid(), signal.SIGKILL)
        variant = registry.get(case.op, case.variant)
        lose = _setting("STAND_IN_LOSE_CONTEXT")
        mark = Path(os.environ.get("STAND_IN_MARKS", "/nonexistent")) / f"lost-{VISIBLE}"
        if lose is not None and self.sent >= int(lose) and not mark.exists():
            mark.write_text("once")
            raise ContextLost(CaseRecord(case, status="failed", reason="CUDARuntimeError: an illegal memory access",
                                         variant_hash=variant.hash(), seed=rng_seed))
        hang = _setting("STAND_IN_HANG")
        hung = Path(os.environ.get("STAND_IN_MARKS", "/nonexistent")) / f"hung-{VISIBLE}"
        if hang is not None and self.sent >= int(hang) and not hung.exists():
            hung.write_text("once")
            time.sleep(3600)  # the case limit's thread ends this process long before
        self.sent += 1
        base = 0.01 * (1 + case.n / 2**20) * float(_setting("STAND_IN_SLOW") or 1)
        wobble = [1 + ((rng_seed >> i) % 7 - 3) * 0.001 for i in range(10)]
        energy = {"windows": [{"seconds": 0.5, "mj": 100000.0, "ops": 1000.0}]} if _setting("STAND_IN_IDLE_W") else {}
        return CaseRecord(case, status="ok", variant_hash=variant.hash(), bytes=float(case.n * 4), seed=rng_seed,
                          samples=Samples(cold_ms=tuple(base * w for w in wobble)), elapsed_s=0.0, energy=energy)


def _header_energy() -> dict:
    idle = _setting("STAND_IN_IDLE_W")
    return {"available": True, "reason": None, "idle_w": float(idle), "counter_step_s": 0.1,
            "method": "stand-in"} if idle else {}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], make_runner=StandInRunner))
