#!/usr/bin/env bash
# `magnetoc regress` end to end: a folder with a good model, a model whose data set is wrong, a
# truncated model and a model without data. Checks the per-model lines (folder order), the closing
# "N passed, M failed", the exit status, that a truncated model fails alone, and that the JUnit
# XML parses and counts the same.   tests/e2e/regress_test.sh BIN_DIR SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"; py=/usr/bin/python3
if ! $py -c "import onnx, numpy" 2>/dev/null; then
  echo "SKIPPED: /usr/bin/python3 with onnx and numpy is needed to make the test models"; exit 77
fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
$py "$src/tests/e2e/make_tiny_model.py" "$work/gen" >/dev/null || fail "cannot make the test model"
zoo="$work/zoo"
mkdir -p "$zoo/a_good" "$zoo/b_wrong/test_data_set_0" "$zoo/c_truncated/test_data_set_0" "$zoo/d_nodata"
cp "$work/gen/tiny.onnx" "$zoo/a_good/model.onnx"; cp -r "$work/gen/test_data_set_0" "$zoo/a_good/"
cp "$work/gen/tiny.onnx" "$zoo/b_wrong/model.onnx"; cp "$work/gen/test_data_set_wrong/"* "$zoo/b_wrong/test_data_set_0/"
head -c 200 "$work/gen/tiny.onnx" > "$zoo/c_truncated/model.onnx"
cp "$work/gen/test_data_set_0/"* "$zoo/c_truncated/test_data_set_0/"
cp "$work/gen/tiny.onnx" "$zoo/d_nodata/model.onnx"

out="$("$bin/magnetoc" regress "$zoo" --jobs 2 --junit "$work/r.xml" -q)"; rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "exit status $rc, expected 1 (two models fail)"
echo "$out" | grep -q '^PASS a_good ' || fail "a_good should pass"
echo "$out" | grep -q '^FAIL b_wrong .*out of tolerance' || fail "b_wrong should fail out of tolerance"
echo "$out" | grep -q '^FAIL c_truncated .*not a valid ONNX model' || fail "c_truncated should fail with the loader's message"
echo "$out" | grep -q '^SKIP d_nodata' || fail "d_nodata should be skipped"
[ "$(echo "$out" | grep -E '^(PASS|FAIL) ' | awk '{print $2}' | tr '\n' ' ')" = "a_good b_wrong c_truncated " ] ||
  fail "lines not in folder order"
[ "$(echo "$out" | tail -1)" = "1 passed, 2 failed" ] || fail "closing line"
$py - "$work/r.xml" <<'PY' || fail "JUnit XML"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert s.get("tests") == "4" and s.get("failures") == "2" and s.get("skipped") == "1", s.attrib
names = [c.get("name") for c in s.findall("testcase")]
assert names == ["a_good", "b_wrong", "c_truncated", "d_nodata"], names
PY

# All passing: exit 0; an empty folder: a clear error, exit 1.
rm -rf "$zoo/b_wrong" "$zoo/c_truncated"
"$bin/magnetoc" regress "$zoo" -q >/dev/null || fail "regress with only passing models should exit 0"
mkdir -p "$work/empty"
msg="$("$bin/magnetoc" regress "$work/empty" 2>&1)"; rc=$?
[ $rc -eq 1 ] && echo "$msg" | grep -q "no model folders found" || fail "empty folder: rc=$rc: $msg"
echo "regress_test: PASS"
