"""One device's values end to end in one flat array, by one kernel: what a bucketed
collective sends.

A train step's all-reduce sends every gradient of a dtype as one flat buffer. Copying the
gradients there one by one costs a command each (and a gradient that is a view, a
transposed kernel gradient, a second one to make it dense first); on GPUs the host's time
per command is what bounds a data-parallel step, so `pack` moves them all with one launch
reading each value in its own layout.

    >>> import netcl.numpy as jnp
    >>> flat = pack([jnp.arange(3.0), jnp.ones((2, 2)).T], jnp.float32)
    >>> flat.tolist()
    [0.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0]
"""
import numpy as np

from ..core import commands
from ..core.array import Array
from ..core.kernels import grid_1d, kernel
from ..core.shapes import prod

# unsigned C types moving elements of each size as raw bits (any dtype of that size)
_BITS = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong", 16: "ulong2"}

# (device, itemsize, layouts) -> [(kernel, first value, stop, elements, offsets set)]
_KERNELS = {}


def pack(xs, dtype):
    """A new dense 1-d array of `dtype` holding the values of `xs` (arrays of one device,
    any layouts) end to end."""
    device, dtype = xs[0].device, np.dtype(dtype)
    flat = Array.empty(device, (sum(x.size for x in xs),), dtype)
    if flat.size:
        pack_into(flat._buf, xs, dtype)
    return flat


def pack_into(buffer, xs, dtype, wait_for=None, parity=None):
    """Enqueue the packing of `xs` (arrays of one device, at least one element in all) into
    the first elements of `buffer` (a cl.Buffer of that device: a collective's staging
    memory), after the events `wait_for`; the last kernel's event. `parity`: (count, half),
    a cl.Buffer holding an int and an element count: the values go `half` elements further
    when the int is odd (the send buffer of a GPU's arrival count, pmap_arrivals)."""
    device, dtype = xs[0].device, np.dtype(dtype)
    layouts = tuple((x.shape, x.strides, x._contig) for x in xs)
    half = None if parity is None else parity[1]
    key = (device, dtype.itemsize, layouts, half)
    built = _KERNELS.get(key)
    if built is None:
        built = _KERNELS[key] = _build(device, dtype.itemsize, layouts, half)
    for k, first, stop, n, offsets in built:
        k.set_arg(0, buffer)
        if half is not None:
            k.set_arg(1, parity[0])
        base = 1 if half is None else 2
        for j, x in enumerate(xs[first:stop]):
            at = base + 2 * j
            k.set_arg(at, x._buf)
            if offsets[j] != x.offset:      # (a scalar argument costs PyOpenCL ~10 us)
                k.set_arg(at + 1, np.int64(x.offset))
                offsets[j] = x.offset
        g, lws = grid_1d(device, n)
        event = commands.launch(device.queue, k, g, lws, wait_for=wait_for)
    return event


def _build(device, itemsize, layouts, half=None):
    """The kernels of one bucket layout: values in chunks whose arguments fit the
    device's limit, each kernel writing its chunk's range of the flat array (`half`
    elements further on an odd count: pack_into's parity)."""
    per_kernel = max(1, (device.target.kernel_argument_bytes // 8 - 3) // 2)
    out, start = [], 0
    for first in range(0, len(layouts), per_kernel):
        chunk = layouts[first:first + per_kernel]
        n = sum(prod(shape) for shape, _, _ in chunk)
        name = f"netcl_pack{len(chunk)}" + ("" if half is None else "_parity")
        out.append((kernel(device, _source(name, itemsize, chunk, start, half), name), first,
                    first + len(chunk), n, [None] * len(chunk)))
        start += n
    return out


def _source(name, itemsize, layouts, start, half=None):
    """OpenCL C of a kernel copying the values of `layouts` (shape, strides, contiguous)
    to flat[start + ...], one work-item per element (with `half`: flat[half + start + ...]
    where count[0] is odd)."""
    T = _BITS[itemsize]
    params = [f"__global {T}* flat"]
    lines, begin = ["  const long i = get_global_id(0);"], 0
    if half is not None:
        params.append("__global const volatile int* count")
        lines.append(f"  if (count[0] & 1) flat += {half};")
    for j, (shape, strides, contig) in enumerate(layouts):
        params += [f"__global const {T}* x{j}", f"const long off{j}"]
        end = begin + prod(shape)
        if end == begin:
            continue
        if contig:
            index = f"off{j} + (i - {begin})"
        else:       # coordinates of element i - begin, from the last axis
            terms, rest = [], f"(i - {begin})"
            for axis in range(len(shape) - 1, -1, -1):
                terms.append(f"(({rest}) % {shape[axis]}) * {strides[axis]}")
                rest = f"({rest}) / {shape[axis]}"
            index = f"off{j} + " + " + ".join(terms)
        lines.append(f"  if (i < {end}) {{ flat[{start} + i] = x{j}[{index}]; return; }}")
        begin = end
    return (f"__kernel void {name}({', '.join(params)}) {{\n" + "\n".join(lines) + "\n}\n")
