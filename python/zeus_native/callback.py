"""Training-loop callbacks (the original's zeus.callback)."""

from __future__ import annotations


class Callback:
    """Base class of the hooks a training loop calls; every hook does nothing by default."""

    def on_train_begin(self) -> None:
        """Before training starts."""

    def on_train_end(self) -> None:
        """After training ends."""

    def on_epoch_begin(self) -> None:
        """At the start of an epoch."""

    def on_epoch_end(self) -> None:
        """At the end of an epoch."""

    def on_step_begin(self) -> None:
        """Before a training step."""

    def on_step_end(self) -> None:
        """After a training step."""

    def on_evaluate(self, metric: float) -> None:
        """After evaluation, with its metric."""

    def on_instruction_begin(self, name: str) -> None:
        """Before the named instruction (pipeline schedules)."""

    def on_instruction_end(self, name: str) -> None:
        """After the named instruction."""


class CallbackSet(Callback):
    """Calls each hook on every callback, in order."""

    def __init__(self, callbacks: list[Callback]) -> None:
        """Wrap `callbacks`."""
        self.callbacks = list(callbacks)

    def on_train_begin(self) -> None:
        """Forward to every callback."""
        for c in self.callbacks:
            c.on_train_begin()

    def on_train_end(self) -> None:
        """Forward to every callback."""
        for c in self.callbacks:
            c.on_train_end()

    def on_epoch_begin(self) -> None:
        """Forward to every callback."""
        for c in self.callbacks:
            c.on_epoch_begin()

    def on_epoch_end(self) -> None:
        """Forward to every callback."""
        for c in self.callbacks:
            c.on_epoch_end()

    def on_step_begin(self) -> None:
        """Forward to every callback."""
        for c in self.callbacks:
            c.on_step_begin()

    def on_step_end(self) -> None:
        """Forward to every callback."""
        for c in self.callbacks:
            c.on_step_end()

    def on_evaluate(self, metric: float) -> None:
        """Forward to every callback."""
        for c in self.callbacks:
            c.on_evaluate(metric)

    def on_instruction_begin(self, name: str) -> None:
        """Forward to every callback."""
        for c in self.callbacks:
            c.on_instruction_begin(name)

    def on_instruction_end(self, name: str) -> None:
        """Forward to every callback."""
        for c in self.callbacks:
            c.on_instruction_end(name)
