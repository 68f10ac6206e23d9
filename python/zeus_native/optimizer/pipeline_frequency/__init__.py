"""Perseus's client (the original's zeus.optimizer.pipeline_frequency): per-instruction
GPU frequencies from a Perseus server, applied in-process (see .optimizer)."""

from zeus_native.optimizer.pipeline_frequency.optimizer import PipelineFrequencyOptimizer

__all__ = ["PipelineFrequencyOptimizer"]
