"""magneto: Magneto's compiler from Python.

    import magneto, numpy as np
    m = magneto.compile("model.onnx")          # or an onnx.ModelProto; returns a loaded model
    outs = m.run({"input": x})                 # dict output name -> ndarray
    magneto.check("model.onnx", data="model/test_data_set_0").passed
    magneto.report("model.onnx", target="cuda")["groups"]

Each function runs the `magnetoc` program (found as described in find_magnetoc) with the
keyword options as its command-line options (see `magnetoc compile --help`): `weights_file=True`
is --weights-file, `shape={"input": (1, 3, 224, 224)}` is --shape input=1x3x224x224, a list
repeats the option, False or None leaves it out. A failure of magnetoc raises CompileError with
its message and exit status.

compile() writes the package (NAME.h, NAME.py, ...) into out_dir and builds the shared library
NAME.py loads: for --target cpu with `magnetoc compile --shared` (against the runtime cached in
MAGNETO_CACHE_DIR: seconds), for cuda and hip with the package's CMake (`--build`). The model it
returns is the package's own NAME.Model: the package folder works the same without magneto.
Needs Debian's python3-numpy (and python3-onnx to pass a ModelProto).
"""
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile

__all__ = ["CompileError", "CheckResult", "compile", "load", "check", "report", "find_magnetoc"]


class CompileError(Exception):
    """magnetoc failed: `message` is what it printed (without the "magnetoc: error: " prefix),
    `status` its exit status (1 bad input, 2 not supported, 3 internal error, 4 a tool failed),
    `command` the command line run and `output` all it printed."""

    def __init__(self, message, status, command, output=""):
        super().__init__("%s (magnetoc exit status %d)" % (message, status))
        self.message = message
        self.status = status
        self.command = command
        self.output = output


class CheckResult:
    """What `magnetoc check` found: `passed` (every output within tolerance), `status` (its exit
    status, 0 or 1), `lines` (one per output and data set, and the closing check: line),
    `output` (all it printed on stdout)."""

    def __init__(self, passed, status, output):
        self.passed = passed
        self.status = status
        self.output = output
        self.lines = [line for line in output.splitlines() if line.strip()]

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return "<CheckResult %s: %s>" % ("PASS" if self.passed else "FAIL",
                                         self.lines[-1] if self.lines else "")


def find_magnetoc():
    """The magnetoc to run: $MAGNETOC if set; else bin/magnetoc or build/bin/magnetoc in a folder
    above this package (the source tree's build, or the prefix it was installed into with
    `cmake --install`); else magnetoc in PATH. Raises CompileError when there is none."""
    env = os.environ.get("MAGNETOC")
    if env:
        return env
    d = os.path.dirname(os.path.abspath(__file__))
    for _ in range(6):
        d = os.path.dirname(d)
        for rel in ("bin/magnetoc", "build/bin/magnetoc"):
            p = os.path.join(d, rel)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    found = shutil.which("magnetoc")
    if found:
        return found
    raise CompileError("cannot find magnetoc: set MAGNETOC to its path, build it (build/bin/magnetoc "
                       "in the source tree) or put it in PATH", 127, [])


def _option_args(options):
    """Keyword options -> magnetoc options (see the module's docstring)."""
    args = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, dict):  # shape={"input": (1, 3, 224, 224)}
            for k, v in value.items():
                if isinstance(v, (tuple, list)):
                    v = "x".join(str(int(d)) for d in v) if v else "scalar"
                args += [flag, "%s=%s" % (k, v)]
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


def _run(args, check_status=True):
    """Runs magnetoc with `args`; returns (exit status, stdout, stderr)."""
    cmd = [find_magnetoc()] + [os.fspath(a) for a in args]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
    except OSError as e:
        raise CompileError("cannot run %s: %s" % (cmd[0], e), 127, cmd) from e
    if check_status and r.returncode != 0:
        raise CompileError(_error_message(r.stderr, r.stdout), r.returncode, cmd,
                           r.stdout + r.stderr)
    return r.returncode, r.stdout, r.stderr


def _error_message(stderr, stdout=""):
    """magnetoc's error message: from its "magnetoc: error:" line on, else the end of its output."""
    text = stderr if stderr.strip() else stdout
    at = text.find("magnetoc: error: ")
    if at >= 0:
        return text[at + len("magnetoc: error: "):].strip()
    return "\n".join(text.strip().splitlines()[-20:]) or "magnetoc failed and printed nothing"


class _ModelFile:
    """A model path, or an onnx.ModelProto saved to a temporary file for as long as it is used."""

    def __init__(self, model):
        self._tmp = None
        if hasattr(model, "SerializeToString"):
            self._tmp = tempfile.mkdtemp(prefix="magneto-model-")
            name = getattr(getattr(model, "graph", None), "name", "") or "model"
            safe = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
            self.path = os.path.join(self._tmp, safe + ".onnx")
            with open(self.path, "wb") as f:
                f.write(model.SerializeToString())
        else:
            self.path = os.fspath(model)
            if not os.path.isfile(self.path):
                raise CompileError("%s: no such model file" % self.path, 1, [])

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)


def load(package_dir, weights=None, threads=2, library=None):
    """Imports PACKAGE_DIR/NAME.py (NAME from its report.json) and returns NAME.Model(weights,
    threads, library). The module is not put in sys.modules: packages of the same name in
    different folders load side by side."""
    package_dir = os.fspath(package_dir)
    with open(os.path.join(package_dir, "report.json")) as f:
        name = json.load(f)["name"]
    path = os.path.join(package_dir, name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.Model(weights=weights, threads=threads, library=library)
    model.package_dir = package_dir
    model.module = module
    return model


def compile(model, target="cpu", out_dir=None, weights=None, threads=2, **options):
    """Compiles `model` (a path or an onnx.ModelProto) with `magnetoc compile --target TARGET`
    into out_dir (default: a new temporary folder, kept: the library lives there), builds the
    shared library and returns the loaded model (load(out_dir, weights, threads)). Any magnetoc
    compile option is a keyword: name="resnet", weights_file=True, shape={"input": (1, 3, 8, 8)},
    passes="fold,dce", no_parallel_opt=True, arch="x86-64-v3". Raises CompileError."""
    if out_dir is None:
        out_dir = tempfile.mkdtemp(prefix="magneto-package-")
    out_dir = os.fspath(out_dir)
    build = ["--shared"] if target == "cpu" else ["--build"]
    options.setdefault("quiet", True)
    with _ModelFile(model) as path:
        _run(["compile", path, "-o", out_dir, "--target", target] + build + _option_args(options))
    return load(out_dir, weights=weights, threads=threads)


def check(model, data=None, target="cpu", **options):
    """`magnetoc check`: compiles and runs the model on each data folder (input_K.pb, output_K.pb;
    default: every test_data_set_* beside the model file) and compares. Returns a CheckResult;
    options as in compile (rtol=1e-3, atol=1e-4, threads=2, emulate=True, ...). Raises
    CompileError when the check could not run (a bad model, a failed build)."""
    with _ModelFile(model) as path:
        if data is None:
            folder = os.path.dirname(os.path.abspath(path))
            data = sorted(os.path.join(folder, d) for d in os.listdir(folder)
                          if d.startswith("test_data_set_"))
            if not data:
                raise CompileError("%s: no test_data_set_* beside the model; pass data=" % path, 1, [])
        elif isinstance(data, (str, os.PathLike)):
            data = [data]
        options.setdefault("quiet", True)
        args = ["check", path, "--target", target] + _option_args(dict(options, data=list(data)))
        status, out, err = _run(args, check_status=False)
    summary = [line for line in out.splitlines() if line.startswith("check: ")]
    # 5: every output matched but the model folded to a constant (not a pass; see the user guide).
    if status not in (0, 1, 5) or not summary:
        raise CompileError(_error_message(err, out), status, [find_magnetoc()] + args, out + err)
    return CheckResult(status == 0 and summary[-1].startswith("check: PASS"), status, out)


def report(model, target="cpu", **options):
    """`magnetoc report --json`: the pipeline's parallel groups, kernel launches and modeled
    latencies as a dict (the JSON report; docs/PARALLEL.md). Options as in compile (device="h100",
    shape=..., no_parallel_opt=True, dot="graph.dot"). Raises CompileError."""
    tmp = tempfile.mkdtemp(prefix="magneto-report-")
    try:
        json_path = os.path.join(tmp, "report.json")
        options.setdefault("quiet", True)
        with _ModelFile(model) as path:
            _run(["report", path, "--target", target, "--json", json_path] + _option_args(options))
        with open(json_path) as f:
            return json.load(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
