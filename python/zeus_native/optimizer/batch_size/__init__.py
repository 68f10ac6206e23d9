"""The batch-size optimizer's client (the original's zeus.optimizer.batch_size).

The server is `zeus bso-server` (docs/batch-size-optimizer.md); the original's
FastAPI server works too, the REST API being the same.
"""

from zeus_native.optimizer.batch_size.client import BatchSizeOptimizer
from zeus_native.optimizer.batch_size.common import JobSpec

__all__ = ["BatchSizeOptimizer", "JobSpec"]
