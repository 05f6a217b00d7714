"""The two commands compiled calls enqueue, through functions a recorder can watch.

Launchers enqueue kernels with `launch` and buffer-to-buffer copies with `copy`, not
PyOpenCL's functions directly. While a recorder watches a queue (`RECORDERS`, set by
transforms/replay.py while it records a compiled call), each command is shown to it
before it is enqueued; otherwise each is one dictionary test on the way to PyOpenCL's
function, looked up at each call (so a test that wraps PyOpenCL's functions to count
launches sees every launch).

    >>> commands.launch(device.queue, kernel, (1024,), None)
"""
import pyopencl as cl

# id(queue) -> the recorder watching that queue (transforms/replay.Recorder)
RECORDERS = {}


def launch(queue, kernel, global_size, local_size, *args, **kwargs):
    """`pyopencl.enqueue_nd_range_kernel`, shown first to the queue's recorder if any."""
    if RECORDERS:
        recorder = RECORDERS.get(id(queue))
        if recorder is not None:
            recorder.launch(kernel, global_size, local_size, args, kwargs)
        else:
            unwatched()
        SHOWN.append(queue)         # (not a command the recorder has not seen: replay.py)
        try:
            return cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size, *args,
                                              **kwargs)
        finally:
            SHOWN.pop()
    return cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size, *args, **kwargs)


def copy(queue, dest, src, **kwargs):
    """`pyopencl.enqueue_copy` between two buffers, shown first to the queue's recorder."""
    if RECORDERS:
        recorder = RECORDERS.get(id(queue))
        if recorder is not None:
            recorder.copy(dest, src, kwargs)
        else:
            unwatched()
        SHOWN.append(queue)
        try:
            return cl.enqueue_copy(queue, dest, src, **kwargs)
        finally:
            SHOWN.pop()
    return cl.enqueue_copy(queue, dest, src, **kwargs)


SHOWN = []      # the queue of the `launch` or `copy` under way, while recorders watch


def unwatched():
    """A command on a queue no recorder watches, while some record: a call that enqueues
    on another device's queue cannot be replayed from one queue's commands."""
    for recorder in RECORDERS.values():
        recorder.fail("a command on another queue")
