"""More of JAX's API surface: jax.custom_batching (custom_vmap, sequential_vmap),
jax.closure_convert (with the custom_vjp fixed-point pattern of JAX's docs),
jax.live_arrays, and jax.profiler (traces written in JAX's directory layout as Chrome
trace-event JSON; device memory profiles). Values against JAX where it is importable, and
bad inputs' errors."""
import functools
import gc
import glob
import gzip
import json
import os
import socket
import threading
import urllib.request

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl.custom_batching import custom_vmap, sequential_vmap

F32 = np.float32
X = np.linspace(-1.0, 1.0, 3, dtype=F32)
Y = np.arange(3, dtype=F32)


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax")


def same(a, b, tol=1e-5):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol, atol=tol)


def same_tree(a, b, tol=1e-5):
    la, lb = netcl.tree_util.tree_leaves(a), netcl.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        same(x, y, tol)


# ---- custom_vmap ----------------------------------------------------------------------------

def _sin_plus(lib, np_):
    """The same custom_vmap function for netcl and JAX: x + sin(y), whose rule computes
    x + cos(y) instead (so that each test sees which one ran), with a record of the rule's
    calls."""
    calls = []

    @lib.custom_batching.custom_vmap
    def f(x, y):
        return x + np_.sin(y)

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        calls.append((axis_size, list(in_batched)))
        assert all(x.shape[0] == axis_size for x, b in zip((xs, ys), in_batched) if b)
        return xs + np_.cos(ys), any(in_batched)
    return f, calls


def test_custom_vmap_runs_the_rule_under_vmap_only(jax):
    f, calls = _sin_plus(netcl, jnp)
    g, jcalls = _sin_plus(jax, jax.numpy)
    x, y = jnp.asarray(X), jnp.asarray(Y)
    same(f(x[1], y[1]), X[1] + np.sin(Y[1]))                    # outside vmap: the function
    same(netcl.jit(f)(x, y), X + np.sin(Y))                    # jit traces through it
    cases = [
        (lambda h: jax_or(h).vmap(h), (X, Y)),
        (lambda h: jax_or(h).vmap(h, in_axes=(None, 0)), (F32(0.5), Y)),
        (lambda h: jax_or(h).vmap(h, in_axes=1), (np.stack([X, Y]), np.stack([Y, X]))),
        (lambda h: jax_or(h).jit(jax_or(h).vmap(h)), (X, Y)),
        (lambda h: jax_or(h).vmap(jax_or(h).jit(h)), (X, Y)),
        (lambda h: jax_or(h).vmap(jax_or(h).vmap(h)), (np.stack([X, Y]), np.stack([Y, X]))),
    ]
    for make, args in cases:
        got = make(f)(*args)
        want = make(g)(*args)
        same(got, want)
    assert calls == jcalls      # the same rule calls: axis sizes and in_batched


def jax_or(fun):
    """The library a test function belongs to (netcl's custom_vmap or JAX's)."""
    import jax
    return netcl if isinstance(fun, custom_vmap) else jax


def test_custom_vmap_forward_mode_and_reverse_mode_as_jax(jax):
    f, _ = _sin_plus(netcl, jnp)
    g, _ = _sin_plus(jax, jax.numpy)
    x, y = jnp.asarray(X), jnp.asarray(Y)
    # jvp of the function; vmap of jvp and jvp of vmap use the rule's derivative
    same_tree(netcl.jvp(f, (x[0], y[0]), (F32(1), F32(1))),
              jax.jvp(g, (X[0], Y[0]), (F32(1), F32(1))))
    same_tree(netcl.jvp(netcl.vmap(f), (x, y), (x, y)), jax.jvp(jax.vmap(g), (X, Y), (X, Y)))
    same_tree(netcl.vmap(lambda a, b: netcl.jvp(f, (a, b), (a, b)))(x, y),
              jax.vmap(lambda a, b: jax.jvp(g, (a, b), (a, b)))(X, Y))
    # primal batched, tangent not (netcl broadcasts the tangent: the same values)
    same_tree(netcl.vmap(lambda a, b: netcl.jvp(f, (a, b), (F32(1), F32(2))))(x, y),
              jax.vmap(lambda a, b: jax.jvp(g, (a, b), (F32(1), F32(2))))(X, Y))
    same(netcl.jacfwd(f)(x, y), jax.jacfwd(g)(X, Y))
    # grad(vmap(f)): vmap runs the rule first, whose operations have derivatives
    same(netcl.grad(lambda b: netcl.vmap(f)(x, b).sum())(y),
         jax.grad(lambda b: jax.vmap(g)(X, b).sum())(Y))
    # reverse mode of the function itself: JAX's linearization fails with ValueError
    with pytest.raises(ValueError):
        jax.grad(g)(F32(1), F32(2))
    with pytest.raises(ValueError, match="custom_vmap function f: reverse-mode"):
        netcl.grad(f)(F32(1), F32(2))
    with pytest.raises(ValueError, match="reverse-mode"):
        netcl.jit(netcl.grad(f))(F32(1), F32(2))
    # an argument that is not differentiated is no obstacle
    same(netcl.grad(lambda a: a * f(F32(1), F32(2)))(F32(3)), 1 + np.sin(2.0), 1e-6)


def test_custom_vmap_under_custom_vjp_jax_docs_example(jax):
    def make(lib, np_):
        @lib.custom_vjp
        @lib.custom_batching.custom_vmap
        def f(x, y):
            return np_.sin(x) * y

        @f.def_vmap
        def f_vmap_rule(axis_size, in_batched, xs, ys):
            return np_.cos(xs) * ys, True

        def f_fwd(x, y):
            return f(x, y), (np_.cos(x), np_.sin(x), y)

        def f_bwd(res, g):
            cos_x, sin_x, y = res
            return (cos_x * g * y, sin_x * g)
        f.defvjp(f_fwd, f_bwd)
        return f
    f, g = make(netcl, jnp), make(jax, jax.numpy)
    same(netcl.vmap(f)(jnp.zeros(3), jnp.ones(3)), [1.0, 1.0, 1.0])
    same(netcl.vmap(f)(jnp.asarray(X), jnp.asarray(Y)), jax.vmap(g)(X, Y))
    same(netcl.grad(f)(F32(0), F32(1)), 1.0)
    same(netcl.grad(f)(F32(0.3), F32(2)), jax.grad(g)(F32(0.3), F32(2)))


def test_custom_vmap_pytrees_kwargs_and_structure(jax):
    def make(lib, np_):
        @lib.custom_batching.custom_vmap
        def f(p, x):
            return {"y": p["w"] * x, "z": x}

        @f.def_vmap
        def rule(axis_size, in_batched, p, xs):
            (pb, xb) = in_batched
            assert isinstance(in_batched, list) and isinstance(pb, dict)
            return {"y": p["w"] * xs * 2, "z": xs}, {"y": pb["w"] or xb, "z": xb}
        return f
    f, g = make(netcl, jnp), make(jax, jax.numpy)
    p = {"w": F32(3)}
    same_tree(netcl.vmap(f, in_axes=(None, 0))(p, jnp.asarray(X)),
              jax.vmap(g, in_axes=(None, 0))(p, X))
    same_tree(f(p, x=jnp.asarray(X)), g(p, x=X))      # keywords, placed by the signature


def test_custom_vmap_bad_inputs():
    with pytest.raises(TypeError, match="custom_vmap: fun must be callable"):
        custom_vmap(3)

    @custom_vmap
    def f(x):
        return x * 2
    with pytest.raises(AttributeError, match="No batching rule defined for custom_vmap "
                                             "function f"):
        f(jnp.ones(2))
    with pytest.raises(TypeError, match="def_vmap: vmap_rule must be callable"):
        f.def_vmap("rule")
    xs = jnp.ones((3, 2))
    f.def_vmap(lambda n, b, x: (x * 5, [True]))
    with pytest.raises(ValueError, match="output value and output batching specification"):
        netcl.vmap(f)(xs)
    f.def_vmap(lambda n, b, x: ((x, x), (True, True)))
    with pytest.raises(ValueError, match="does not match that of original"):
        netcl.vmap(f)(xs)
    f.def_vmap(lambda n, b, x: x)
    with pytest.raises(TypeError, match=r"must return a pair \(out, out_batched\)"):
        netcl.vmap(f)(jnp.ones((2, 2)))
    f.def_vmap(lambda n, b, x: (x[0], True))
    with pytest.raises(ValueError, match="marked batched but has shape"):
        netcl.vmap(f)(xs)
    # out_batched False: the output is broadcast over the batch (as JAX does)
    f.def_vmap(lambda n, b, x: (jnp.zeros(2), False))
    same(netcl.vmap(f)(xs), np.zeros((3, 2)))


def test_custom_vmap_keyword_only_error():
    g = custom_vmap(lambda x, *, k: x)
    g.def_vmap(lambda n, b, x: (x, True))
    with pytest.raises(TypeError, match="custom_vmap <lambda>: keyword-only"):
        g(jnp.ones(2), k=jnp.ones(2))


def test_sequential_vmap(jax):
    def body(x, y):
        return x * y + 1.0
    f, g = sequential_vmap(body), jax.custom_batching.sequential_vmap(body)
    x, y = jnp.asarray(X), jnp.asarray(Y)
    same(netcl.vmap(f)(x, y), jax.vmap(g)(X, Y))
    same(netcl.vmap(f, in_axes=(0, None))(x, F32(2)), jax.vmap(g, in_axes=(0, None))(X, F32(2)))
    same(netcl.jit(netcl.vmap(f))(x, y), X * Y + 1)
    same(f(x, y), X * Y + 1)
    # one application of body per element: its IR holds three scalar products
    ir = str(netcl.make_ir(netcl.vmap(f))(x, y))
    assert ir.count(" mul ") == 3, ir
    with pytest.raises(TypeError, match="sequential_vmap: f must be callable"):
        sequential_vmap(None)


# ---- closure_convert ------------------------------------------------------------------------

def test_closure_convert_hoists_what_jax_hoists(jax):
    def counts(lib, np_, w0):
        seen = {}
        w = np_.asarray(np.ones(3, F32))
        cf, consts = lib.closure_convert(lambda x: x * w + 1.0, np_.ones(3, np_.float32))
        seen["concrete"] = len(consts)
        same(cf(np_.ones(3, np_.float32)), np.full(3, 2.0))

        def outer(v):
            cf, consts = lib.closure_convert(lambda x: x * v * 2.0 + v.astype(np_.int32),
                                             np_.ones(3, np_.float32))
            seen.setdefault("tracer", []).append(len(consts))
            return cf(np_.ones(3, np_.float32), *consts).sum()
        lib.grad(outer)(w0)
        lib.jit(outer)(w0)
        lib.vmap(outer)(np_.stack([w0, w0]))      # a vmap value carries no derivative
        return seen
    assert counts(netcl, jnp, jnp.ones(3, jnp.float32)) == \
        counts(jax, jax.numpy, jax.numpy.ones(3)) == {"concrete": 0, "tracer": [1, 1, 0]}


def test_closure_convert_pytrees_and_errors():
    cf, consts = netcl.closure_convert(lambda p, y: (p["a"] + y, y), {"a": F32(1)}, F32(2))
    assert consts == []
    out = cf({"a": F32(1)}, F32(2))
    same(out[0], 3.0)
    with pytest.raises(TypeError, match="same Pytree structure"):
        cf(F32(1), F32(2))
    with pytest.raises(TypeError, match="closure_convert: fun must be callable"):
        netcl.closure_convert(3, F32(1))

    def outer(v):
        cf, consts = netcl.closure_convert(lambda x: x * v, F32(1))
        with pytest.raises(TypeError, match="1 hoisted constant"):
            cf()
        return cf(F32(1), *consts)
    netcl.grad(outer)(F32(2))


def _fixed_point(lib, np_):
    """JAX docs' fixed-point solver, with implicit differentiation in a custom_vjp and
    closure_convert making the solver's function's closed-over values explicit."""
    @functools.partial(lib.custom_vjp, nondiff_argnums=(0,))
    def _solve(f, x0, *consts):
        x = x0
        for _ in range(40):
            x = f(x, *consts)
        return x

    def fwd(f, x0, *consts):
        x = _solve(f, x0, *consts)
        return x, (x, consts)

    def bwd(f, res, g):
        x, consts = res
        _, vjp_x = lib.vjp(lambda z: f(z, *consts), x)
        u = g
        for _ in range(40):        # u = g + u df/dx: the adjoint's fixed point
            u = g + vjp_x(u)[0]
        _, vjp_c = lib.vjp(lambda *c: f(x, *c), *consts)
        return (np_.zeros_like(x), *vjp_c(u))
    _solve.defvjp(fwd, bwd)

    def fixed_point(f, x0):
        converted, consts = lib.closure_convert(f, x0)
        return _solve(converted, x0, *consts)
    return fixed_point


def test_closure_convert_with_custom_vjp_fixed_point(jax):
    rng = np.random.default_rng(0)
    W0 = (rng.standard_normal((4, 4)) * 0.3).astype(F32)
    B0 = rng.standard_normal(4).astype(F32)

    def loss(lib, np_, fixed_point):
        def f(w, b):
            x = fixed_point(lambda x: np_.tanh(w @ x + b), np_.zeros(4, np_.float32))
            return np_.sum(x * x)
        return f
    fp = _fixed_point(netcl, jnp)
    # the square root as a fixed point of Newton's iteration: d sqrt(a)/da = 1 / (2 sqrt a)
    sqrt = lambda a: fp(lambda x: 0.5 * (x + a / x), a)        # noqa: E731
    same(netcl.grad(sqrt)(F32(2)), 0.5 / np.sqrt(2.0))
    got = netcl.grad(loss(netcl, jnp, fp), argnums=(0, 1))(jnp.asarray(W0), jnp.asarray(B0))
    want = jax.grad(loss(jax, jax.numpy, _fixed_point(jax, jax.numpy)), argnums=(0, 1))(W0, B0)
    same_tree(got, want, 1e-4)

    def unrolled(w, b):     # differentiating through the iterations: the same derivative
        x = jnp.zeros(4, jnp.float32)
        for _ in range(40):
            x = jnp.tanh(w @ x + b)
        return jnp.sum(x * x)
    same_tree(got, netcl.grad(unrolled, argnums=(0, 1))(jnp.asarray(W0), jnp.asarray(B0)),
              1e-4)


# ---- live_arrays ----------------------------------------------------------------------------

def test_live_arrays():
    x = jnp.arange(5.0)
    y = x[1:3]              # a view is an array of its own
    ids = {id(a) for a in netcl.live_arrays()}
    assert id(x) in ids and id(y) in ids
    assert all(isinstance(a, netcl.Array) for a in netcl.live_arrays())
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted() and id(x) not in {id(a) for a in netcl.live_arrays()}
    z = jnp.ones(2)
    zid = id(z)
    del z
    gc.collect()
    assert zid not in {id(a) for a in netcl.live_arrays("cpu")}
    assert netcl.live_arrays(netcl.default_backend()) is not None
    with pytest.raises(TypeError, match="live_arrays: platform must be a str"):
        netcl.live_arrays(3)
    with pytest.raises(ValueError, match="live_arrays: unknown platform 'nope'"):
        netcl.live_arrays("nope")


# ---- profiler -------------------------------------------------------------------------------

def _trace_events(log_dir):
    paths = glob.glob(os.path.join(str(log_dir), "plugins", "profile", "*",
                                   "*.trace.json.gz"))
    assert len(paths) == 1, paths
    with gzip.open(paths[0], "rt") as f:
        data = json.load(f)
    return paths[0], data


def test_profiler_trace_records_spans_in_jax_layout(tmp_path):
    from netcl import profiler
    from netcl.core.eval import eval_interpreter
    from netcl.transforms.jit import Jitted
    call = Jitted.__call__
    x = jnp.ones(3)
    double = netcl.jit(lambda v: jnp.sin(v) * 2.0)

    @profiler.annotate_function
    def step_body(v):
        return v - 1.0
    with profiler.trace(tmp_path, create_perfetto_trace=True):
        assert "process" in eval_interpreter.__dict__       # hooks on while tracing
        with profiler.StepTraceAnnotation("train", step_num=np.int64(7)):
            with netcl.named_scope("encoder"):
                y = x + 1.0
            z = double(y)
        with profiler.TraceAnnotation("tail", note="x"):
            step_body(z).block_until_ready()
        netcl.named_call(jnp.cos, name="cosine")(x)
    # hooks off again: the eager path and jit's call are what they were
    assert "process" not in eval_interpreter.__dict__ and Jitted.__call__ is call
    path, data = _trace_events(tmp_path)
    folder = os.path.dirname(path)
    assert os.path.basename(path) == f"{socket.gethostname()}.trace.json.gz"
    assert len(os.path.basename(folder).split("_")) == 6        # YYYY_MM_DD_HH_MM_SS
    with gzip.open(os.path.join(folder, "perfetto_trace.json.gz"), "rt") as f:
        perfetto = json.load(f)
    assert "metadata" not in perfetto and perfetto["traceEvents"] == data["traceEvents"]
    spans = {e["name"]: e for e in data["traceEvents"] if e["ph"] == "X"}
    assert {"train", "encoder", "add", "jit(<lambda>)", "tail", "cosine", "cos",
            "sub"} <= set(spans), sorted(spans)
    assert spans["train"]["args"] == {"step_num": 7} and spans["tail"]["args"] == {"note": "x"}
    assert "test_profiler_trace_records_spans_in_jax_layout.<locals>.step_body" in spans
    assert spans["add"]["cat"] == "eager" and spans["jit(<lambda>)"]["cat"] == "jit"

    def inside(inner, outer):
        a, b = spans[inner], spans[outer]
        return b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"]
    assert inside("add", "encoder") and inside("encoder", "train")
    assert inside("jit(<lambda>)", "train") and inside("cos", "cosine")
    assert all(e["tid"] == threading.get_native_id() for e in spans.values())
    # no trace: annotations and named scopes record nothing, and the session is gone
    with profiler.TraceAnnotation("after"), netcl.named_scope("after"):
        pass
    assert profiler._session is None


def test_profiler_start_stop_errors(tmp_path):
    from netcl import profiler
    from netcl.core.eval import eval_interpreter
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    profiler.start_trace(str(tmp_path))
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            profiler.start_trace(str(tmp_path))
    finally:
        path = profiler.stop_trace()
    assert os.path.exists(path)
    with pytest.raises(TypeError, match="start_trace: log_dir must be a str"):
        profiler.start_trace(3)
    with pytest.raises(ZeroDivisionError):      # an error inside: hooks off, trace written
        with profiler.trace(tmp_path / "err"):
            jnp.ones(2) + 1.0
            1 / 0
    assert "process" not in eval_interpreter.__dict__ and profiler._session is None
    _trace_events(tmp_path / "err")
    with pytest.raises(TypeError, match="TraceAnnotation: name must be a str"):
        profiler.TraceAnnotation(3)
    with pytest.raises(TypeError, match="StepTraceAnnotation: step_num must be an int"):
        profiler.StepTraceAnnotation("s", step_num="1")
    with pytest.raises(TypeError, match="annotate_function: func must be callable"):
        profiler.annotate_function(3)
    with pytest.raises(TypeError, match="named_scope: name must be a str"):
        netcl.named_scope(1)


def test_profiler_perfetto_link_serves_the_trace(tmp_path, capsys):
    from netcl import profiler
    src = tmp_path / "perfetto_trace.json.gz"
    src.write_bytes(gzip.compress(b'{"traceEvents": []}'))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = threading.Thread(target=profiler._host_perfetto_trace_file, args=(src, port))
    server.start()
    body = None
    for _ in range(50):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/perfetto_trace.json.gz",
                                        timeout=5) as r:
                body = r.read()
            break
        except OSError:
            threading.Event().wait(0.05)
    server.join(10)
    assert body == src.read_bytes() and not server.is_alive()
    assert f"ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/perfetto_trace.json.gz" in \
        capsys.readouterr().out


def _decode(buf):
    """A protobuf message's fields as (number, value) pairs: ints, or bytes for
    length-delimited ones (what a pprof profile uses)."""
    out, i = [], 0

    def varint():
        nonlocal i
        n = shift = 0
        while True:
            b = buf[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n
    while i < len(buf):
        key = varint()
        if key & 7 == 0:
            out.append((key >> 3, varint()))
        else:
            n = varint()
            out.append((key >> 3, bytes(buf[i:i + n])))
            i += n
    return out


def test_device_memory_profile():
    from netcl import profiler
    keep = jnp.ones((17, 3), jnp.float32)
    keep.block_until_ready()
    raw = gzip.decompress(profiler.device_memory_profile())
    fields = _decode(raw)
    strings = [v.decode() for k, v in fields if k == 6]
    assert strings[0] == "" and {"allocations", "count", "space", "bytes"} <= set(strings)
    functions = {}
    for k, v in fields:
        if k == 5:
            f = dict(_decode(v))
            functions[f[1]] = strings[f[2]]
    samples = []
    for k, v in fields:
        if k == 2:
            s = dict(_decode(v))
            locs, vals = _decode_packed(s[1]), _decode_packed(s[2])
            samples.append(([functions[i] for i in locs], vals))
    ours = [vals for stack, vals in samples if stack[0] == "float32[17,3]"]
    assert ours and ours[0][0] >= 1 and ours[0][1] >= 17 * 3 * 4
    assert all(stack[1] == str(keep.device) for stack, _ in samples if stack[0] ==
               "float32[17,3]")
    with pytest.raises(TypeError, match="device_memory_profile: backend must be a str"):
        profiler.device_memory_profile(1)


def _decode_packed(b):
    out, n, shift = [], 0, 0
    for byte in b:
        n |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            out.append(n)
            n = shift = 0
    return out
