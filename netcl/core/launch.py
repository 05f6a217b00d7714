"""Launch: what one primitive application enqueues on one device, for arguments of one layout.

A primitive's `make_launcher(device, args, params, out_avals)` rule builds one (kernels
built, the arguments that never change for this layout set once); the eager interpreter
caches it per primitive, params and argument layouts, and a compiled call's `Plan`
(transforms/plan.py) is a list of them over buffer slots.

    >>> launch = Launch(run=lambda x: x)
    >>> launch.run_into is None, launch.kernels is None
    (True, True)

`run(*arrays)` enqueues and returns the output array (a tuple for several outputs).
`run_into(offers, *arrays)` does the same, each output taking one of the storages in
`offers` that fits instead of a new buffer: how a plan writes an output over an input that
dies there (pool.output_storage). `kernels` lists what one run enqueues, in order (a
GEMM's pack kernel, a product and its epilogue group as two kernels), for `lower()`;
None where the launch does not say (jit then names the primitive's own kernel).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True, slots=True)
class Kernel:
    """One OpenCL kernel a launch enqueues: its name and its source."""
    name: str
    source: str

    def __repr__(self):
        return f"Kernel({self.name})"


@dataclass(frozen=True, slots=True)
class Launch:
    """What one primitive application enqueues (see the module's docstring)."""
    run: Callable
    run_into: Optional[Callable] = None
    kernels: Optional[tuple] = None     # of Kernel

    def __call__(self, *arrays):
        """`run` (composite launchers call the launches they are built from this way)."""
        return self.run(*arrays)


def as_launch(launcher):
    """A make_launcher rule's result as a Launch (a plain function is its `run`)."""
    return launcher if isinstance(launcher, Launch) else Launch(launcher)
