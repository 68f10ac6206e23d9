"""A stand-in for PyTorch, on sys.path only inside tests/bso/original_client_test.py.

The original ZeusMonitor synchronises CUDA through torch before each window
(torch.cuda.synchronize); the project never installs the torch wheel, and the
simulated GPUs have no CUDA work to wait for, so these two calls are all the
original code reaches.
"""


class cuda:  # noqa: N801 -- mirrors the torch.cuda namespace
    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def synchronize(device=None) -> None:
        return None
