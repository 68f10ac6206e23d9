"""A stand-in for PyTorch (with aiofiles and pandas beside it), on sys.path only inside tests/perseus/original_client_test.py.

The original PipelineFrequencyOptimizer needs torch.distributed to share the
job id from rank 0 and torch.cuda to pick and synchronise its device. The
project never installs the torch wheel and the simulated GPUs run no CUDA
work, so this is all of torch the original client reaches.
"""
from . import distributed  # noqa: F401


class cuda:  # noqa: N801 -- mirrors the torch.cuda namespace
    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def set_device(device) -> None:
        return None

    @staticmethod
    def synchronize(device=None) -> None:
        return None
