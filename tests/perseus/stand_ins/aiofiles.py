"""A stand-in for aiofiles: the original client imports
zeus.optimizer.pipeline_frequency.common, which imports it for the server's
dump functions only; the client never calls it."""


def open(*args, **kwargs):  # noqa: A001 -- mirrors aiofiles.open
    raise NotImplementedError("aiofiles stand-in: only the original server writes files")
