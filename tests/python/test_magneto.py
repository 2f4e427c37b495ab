"""Tests of the Python layer: the magneto package (python/magneto) and the NAME.py loader every
generated package has. Two small models made here with onnx.helper: tests/e2e/make_tiny_model.py's
Conv-Relu-Add (expected output computed by numpy), and a Gather on two inputs (float data, int64
indices: an out-of-range index is the library's run-time error). Each is compiled once with
magneto.compile (magnetoc compile --shared: the runtime cached in MAGNETO_CACHE_DIR, about a
second per package).

    MAGNETOC=build/bin/magnetoc PYTHONPATH=python /usr/bin/python3 tests/python/test_magneto.py

Exit status 77 (ctest's skip) without numpy or onnx, unless MAGNETO_REQUIRE_TOOLS=1 (CI).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from ctypes import c_void_p as ctypes_void_p

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    word, code = ("FAILED", 1) if os.environ.get("MAGNETO_REQUIRE_TOOLS") == "1" else ("SKIPPED", 77)
    print("%s: %s: the Python tests did not run (scripts/setup.sh installs python3-numpy and "
          "python3-onnx)" % (word, e))
    sys.exit(code)

import magneto

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def gather_model():
    """y = Gather(data, idx, axis=0) + bias: data float32 [4, 3], idx int64 [2], y [2, 3]."""
    bias = np.arange(3, dtype=np.float32)
    g = helper.make_graph(
        [helper.make_node("Gather", ["data", "idx"], ["g"], name="gather", axis=0),
         helper.make_node("Add", ["g", "bias"], ["y"], name="add")],
        "gather",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [4, 3]),
         helper.make_tensor_value_info("idx", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(bias, "bias")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


class MagnetoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="magneto-python-test-")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests/e2e/make_tiny_model.py"),
                        os.path.join(cls.work, "m")], check=True)
        cls.model = os.path.join(cls.work, "m", "tiny.onnx")
        data = os.path.join(cls.work, "m", "test_data_set_0")
        cls.x = load_pb(os.path.join(data, "input_0.pb"))
        cls.y = load_pb(os.path.join(data, "output_0.pb"))
        cls.pkg = os.path.join(cls.work, "tiny")
        cls.m = magneto.compile(cls.model, out_dir=cls.pkg, name="tiny")

    @classmethod
    def tearDownClass(cls):
        cls.m.close()
        shutil.rmtree(cls.work, ignore_errors=True)

    # --- compile and run ---------------------------------------------------------------------
    def test_run_matches_numpy(self):
        for outs in (self.m.run({"x": self.x}), self.m.run([self.x])):
            self.assertEqual(list(outs), ["y"])
            self.assertEqual(outs["y"].dtype, np.float32)
            np.testing.assert_allclose(outs["y"], self.y, rtol=1e-4, atol=1e-4)

    def test_introspection(self):
        self.assertEqual([(p.name, p.shape, p.dtype) for p in self.m.inputs],
                         [("x", (1, 3, 8, 8), np.dtype(np.float32))])
        self.assertEqual([(p.name, p.shape, p.dtype) for p in self.m.outputs],
                         [("y", (1, 4, 8, 8), np.dtype(np.float32))])

    def test_package_files(self):
        for f in ("tiny.h", "tiny.py", "libtiny.so", "CMakeLists.txt", "report.json"):
            self.assertTrue(os.path.isfile(os.path.join(self.pkg, f)), f)
        with open(os.path.join(self.pkg, "CMakeLists.txt")) as f:
            self.assertIn("option(tiny_SHARED", f.read())

    def test_threads(self):
        with magneto.load(self.pkg, threads=1) as one:
            np.testing.assert_allclose(one.run([self.x])["y"], self.y, rtol=1e-4, atol=1e-4)
            one.set_threads(3)
            np.testing.assert_allclose(one.run([self.x])["y"], self.y, rtol=1e-4, atol=1e-4)
        with self.assertRaisesRegex(ValueError, "threads must be an int >= 1"):
            magneto.load(self.pkg, threads=0)

    def test_non_contiguous_input(self):
        wide = np.zeros((1, 3, 8, 16), np.float32)
        wide[..., ::2] = self.x
        np.testing.assert_allclose(self.m.run([wide[..., ::2]])["y"], self.y, rtol=1e-4, atol=1e-4)

    # --- the loader's errors -----------------------------------------------------------------
    def test_wrong_dtype(self):
        with self.assertRaisesRegex(ValueError, r"input 'x' has dtype float64, the model expects float32"):
            self.m.run({"x": self.x.astype(np.float64)})

    def test_wrong_shape(self):
        with self.assertRaisesRegex(ValueError, r"input 'x' has shape \(1, 3, 8, 7\), the model expects \(1, 3, 8, 8\)"):
            self.m.run({"x": self.x[..., :7]})

    def test_missing_or_unknown_input(self):
        with self.assertRaisesRegex(ValueError, r"missing input 'x'"):
            self.m.run({})
        with self.assertRaisesRegex(ValueError, r"missing input 'x'"):
            self.m.run([])
        with self.assertRaisesRegex(ValueError, r"no input named 'z'"):
            self.m.run({"x": self.x, "z": self.x})

    def test_destroyed_model(self):
        m = magneto.load(self.pkg)
        stale = m._handle
        m.close()
        m.close()  # no effect
        with self.assertRaisesRegex(RuntimeError, "closed"):
            m.run([self.x])
        # The C interface itself detects the destroyed handle (its registry of live handles).
        lib = m.module.load_library()
        out = np.empty((1, 4, 8, 8), np.float32)
        ins = (ctypes_void_p * 1)(self.x.ctypes.data)
        outs = (ctypes_void_p * 1)(out.ctypes.data)
        self.assertEqual(lib.tiny_run(stale, ins, outs), 1)
        self.assertIn("destroyed", lib.tiny_last_error(stale).decode())

    def test_weights_file(self):
        pkg = os.path.join(self.work, "tiny_wf")
        with magneto.compile(self.model, out_dir=pkg, name="tiny", weights_file=True) as m:
            np.testing.assert_allclose(m.run([self.x])["y"], self.y, rtol=1e-4, atol=1e-4)
        weights = os.path.join(pkg, "tiny_weights.bin")
        missing = os.path.join(self.work, "no_such_weights.bin")
        with self.assertRaisesRegex(RuntimeError, "creating the model failed.*no_such_weights.bin"):
            magneto.load(pkg, weights=missing)
        truncated = os.path.join(self.work, "truncated.bin")
        with open(weights, "rb") as f, open(truncated, "wb") as g:
            g.write(f.read()[:-8])
        with self.assertRaises(RuntimeError) as cm:
            magneto.load(pkg, weights=truncated)
        self.assertEqual(cm.exception.status, 2)  # NAME_ERR_WEIGHTS
        self.assertIn("truncated.bin", str(cm.exception))
        with magneto.load(pkg, weights=weights) as m:
            np.testing.assert_allclose(m.run([self.x])["y"], self.y, rtol=1e-4, atol=1e-4)

    def test_run_error_has_the_library_message(self):
        with magneto.compile(gather_model(), out_dir=os.path.join(self.work, "gather"),
                             name="gather") as m:
            self.assertEqual([(p.name, p.dtype) for p in m.inputs],
                             [("data", np.dtype(np.float32)), ("idx", np.dtype(np.int64))])
            data = np.arange(12, dtype=np.float32).reshape(4, 3)
            got = m.run({"idx": np.array([3, 1]), "data": data})["y"]
            np.testing.assert_array_equal(got, data[[3, 1]] + np.arange(3, dtype=np.float32))
            with self.assertRaisesRegex(ValueError, r"input 'idx' has dtype int32"):
                m.run({"data": data, "idx": np.array([3, 1], np.int32)})
            with self.assertRaisesRegex(RuntimeError, "run failed.*Gather: index 7 is out of range"):
                m.run({"data": data, "idx": np.array([7, 0])})
            np.testing.assert_array_equal(m.run([data, np.array([0, 0])])["y"][0], data[0] + [0, 1, 2])

    def test_generated_loader_without_the_compiler(self):
        code = ("import numpy as np, tiny; m = tiny.Model(); x = np.load('x.npy'); "
                "print(float(abs(m.run({'x': x})['y'] - np.load('y.npy')).max()))")
        np.save(os.path.join(self.work, "x.npy"), self.x)
        np.save(os.path.join(self.work, "y.npy"), self.y)
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": self.pkg}
        r = subprocess.run([sys.executable, "-c", code], cwd=self.work, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(float(r.stdout), 1e-4)

    def test_library_not_found(self):
        with self.assertRaisesRegex(OSError, "cannot load the tiny library; tried"):
            magneto.load(self.pkg, library=os.path.join(self.work, "libnone.so"))
        with self.assertRaisesRegex(ValueError, "libtiny.so is loaded already"):
            self.m.module.Model(library=os.path.join(self.work, "libnone.so"))

    # --- magneto's other functions and errors ------------------------------------------------
    def test_compile_errors(self):
        bad = os.path.join(self.work, "bad.onnx")
        with open(bad, "wb") as f:
            f.write(b"this is not a model")
        with self.assertRaises(magneto.CompileError) as cm:
            magneto.compile(bad, out_dir=os.path.join(self.work, "bad"))
        self.assertEqual(cm.exception.status, 1)
        self.assertIn("bad.onnx", cm.exception.message)
        with self.assertRaises(magneto.CompileError) as cm:
            magneto.compile(self.model, out_dir=os.path.join(self.work, "x"), bogus_option=3)
        self.assertIn("unknown option '--bogus-option'", cm.exception.message)
        with self.assertRaisesRegex(magneto.CompileError, "--shared builds the cpu target"):
            magneto._run(["compile", self.model, "-o", os.path.join(self.work, "cu"),
                          "--target", "cuda", "--shared"])

    def test_check(self):
        ok = magneto.check(self.model, data=os.path.join(self.work, "m", "test_data_set_0"))
        self.assertTrue(ok.passed)
        self.assertEqual(ok.status, 0)
        self.assertTrue(ok.lines[-1].startswith("check: PASS"))
        wrong = magneto.check(self.model, data=os.path.join(self.work, "m", "test_data_set_wrong"))
        self.assertFalse(wrong.passed)
        self.assertEqual(wrong.status, 1)
        self.assertTrue(any(line.startswith("output y:") and "FAIL" in line for line in wrong.lines), wrong.output)

    def test_report(self):
        r = magneto.report(self.model)
        self.assertEqual(r["target"], "cpu")
        self.assertEqual(r["model"], self.model)
        self.assertGreaterEqual(r["nodes"], 1)
        self.assertIsInstance(r["groups"], list)

    def test_option_args(self):
        self.assertEqual(
            magneto._option_args({"weights_file": True, "no_parallel_opt": False, "name": None,
                                  "shape": {"x": (1, 3, 8, 8), "s": ()}, "data": ["a", "b"]}),
            ["--weights-file", "--shape", "x=1x3x8x8", "--shape", "s=scalar", "--data", "a",
             "--data", "b"])

if __name__ == "__main__":
    unittest.main(verbosity=2)
