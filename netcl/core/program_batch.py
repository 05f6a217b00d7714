"""Several generated sources as one OpenCL program: one compiler run instead of one each.

Building a program has a fixed cost per compiler run that does not depend on its size:
PoCL parses the whole OpenCL C header every time (README, "First runs"), so a compiled
function whose kernels are built one program each pays it once per kernel before any is
compiled. `combine` concatenates sources so that each still means what it meant alone:

- names two sources both define at file scope (kernels, helper functions, typedefs,
  constant tables, struct tags) are renamed in each with a `#define` before it and an
  `#undef` after it, so `netcl_gemm` of the third source becomes `netcl_gemm__b2`;
- macros a source defines are undefined after it (include guards stay, so a guarded helper
  block appears once);
- preambles that sources carry themselves are left to the caller, to appear once;
- a source that turns FP_CONTRACT off at file scope would turn it off for the sources after
  it: sources are only combined with others in the same state (`contract_state`).

    >>> a = "__kernel void k(__global float* x) { x[0] = 1.0f; }"
    >>> src, names = combine([a, a.replace("1.0f", "2.0f")])
    >>> names
    ({'k': 'k__b0'}, {'k': 'k__b1'})
"""
import re

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
_IFNDEF = re.compile(r"^[ \t]*#[ \t]*ifndef[ \t]+(\w+)", re.M)
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_TAG = re.compile(r"\b(?:struct|union|enum)\s+([A-Za-z_]\w*)")
_KERNEL = re.compile(r"\b(?:__kernel|kernel)\b[^;{(]*?\b(\w+)\s*\(")
_CONTRACT_OFF = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+OPENCL[ \t]+FP_CONTRACT[ \t]+OFF", re.M)


# words a declaration's head may end with that are not its name (`typedef struct {...} T;`)
_KEYWORDS = frozenset("""typedef struct union enum const volatile static inline extern
    __kernel kernel __global global __constant constant __local local __private private
    restrict void""".split())


def _code(source):
    """`source` without comments and preprocessor lines (what the scanner reads)."""
    return _DIRECTIVE.sub("", _COMMENT.sub(" ", source))


def _file_scope_chunks(code):
    """The text at brace depth 0 of each file-scope declaration or definition, with the
    position of its first '{' marked by a '{' (bodies and initialisers dropped)."""
    chunks, head, depth = [], [], 0
    for ch in code:
        if ch == "{":
            if depth == 0:
                head.append("{")
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                decl = _ATTRIBUTE.sub(" ", "".join(head)).split("{")[0]
                if "(" in decl and "=" not in decl:
                    chunks.append("".join(head))    # a function definition ends here
                    head = []
        elif depth == 0:
            if ch == ";":
                chunks.append("".join(head))
                head = []
            else:
                head.append(ch)
    return chunks


def defined_names(source):
    """Names `source` defines at file scope (see the module docstring)."""
    names = set()
    for chunk in _file_scope_chunks(_code(source)):
        text = _ATTRIBUTE.sub(" ", chunk)
        names.update(_TAG.findall(text))
        head, _, tail = text.partition("{")
        if "(" in head.split("=")[0]:               # a function: the name before its '('
            found = _IDENT.findall(head.split("(")[0])
        else:       # a typedef or variable: its last word (`typedef struct {...} T;`: T)
            decl = tail if tail.strip() else head
            found = _IDENT.findall(decl.split("=")[0].split("[")[0])
        found = [n for n in found if n not in _KEYWORDS]
        if found:
            names.add(found[-1])
    return names


def kernel_names(source):
    """The names of the kernels `source` defines."""
    return _KERNEL.findall(_ATTRIBUTE.sub(" ", _code(source)))


def contract_state(source):
    """Whether `source` turns FP_CONTRACT off at file scope (sources combine only with
    sources in the same state)."""
    code = _COMMENT.sub(" ", source)
    for m in _CONTRACT_OFF.finditer(code):
        if code[:m.start()].count("{") == code[:m.start()].count("}"):
            return "off"
    return "default"


def combine(sources, shared=()):
    """One source defining every kernel of `sources`, and per source the kernel names it
    renamed ({name in the source: name in the program}). Texts in `shared` (preambles a
    source may carry itself) are taken out of each: the caller puts them once in front."""
    for text in shared:
        sources = [s.replace(text, "") for s in sources]
    defined = [defined_names(s) for s in sources]
    seen, clashes = set(), set()
    for names in defined:
        clashes |= seen & names
        seen |= names
    parts, renamed = [], []
    for i, (src, names) in enumerate(zip(sources, defined)):
        mine = sorted(names & clashes)
        guards = set(_IFNDEF.findall(src))
        macros = [m for m in dict.fromkeys(_DEFINE.findall(src)) if m not in guards]
        parts += [f"#define {n} {n}__b{i}" for n in mine] + [src]
        parts += [f"#undef {n}" for n in mine + macros]
        kernels = set(kernel_names(src))
        renamed.append({n: f"{n}__b{i}" for n in mine if n in kernels})
    return "\n".join(parts) + "\n", tuple(renamed)
