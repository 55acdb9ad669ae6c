"""`primbench ARGS...` with stand-in GPUs: STAND_IN_GPUS of them visible (default 2), each worker
tests/stand_in/gpu_worker.py. Everything else is the real command line and scheduler."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from primbench.cli import main as cli_main  # noqa: E402
from primbench.run import gpus, scheduler  # noqa: E402

WORKER = Path(__file__).with_name("gpu_worker.py")


def install() -> None:
    gpus.visible_devices = lambda: [str(i) for i in range(int(os.environ.get("STAND_IN_GPUS", "2")))]
    scheduler.worker_command = lambda fd: [sys.executable, str(WORKER), "--records-fd", str(fd)]


if __name__ == "__main__":
    install()
    sys.exit(cli_main.main(sys.argv[1:]))
