#!/usr/bin/env bash
# Packs what a lent GPU machine needs from this one into build/device-kit (for the device tool's
# `carry`): build/bin/magnetoc and the shared libraries it needs that a bare machine may lack
# (everything ldd lists except the C library, the dynamic loader and libm), plus a wrapper
# bin/magnetoc that points the loader at them. The templates and runtime come with the working
# tree (MAGNETO_HOME = the repository). Prints the kit's size; the device tool carries 64 MiB.
#   tools/gpu/pack_device_kit.sh [--magnetoc PATH] [--out DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
magnetoc="$root/build/bin/magnetoc"
out="$root/build/device-kit"
while [ $# -gt 0 ]; do
  case "$1" in
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "pack_device_kit.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$magnetoc" ] || { echo "pack_device_kit.sh: $magnetoc not built (scripts/test.sh build)" >&2; exit 2; }
rm -rf "$out"; mkdir -p "$out/bin" "$out/lib"
cp "$magnetoc" "$out/bin/magnetoc.bin"
strip "$out/bin/magnetoc.bin" 2>/dev/null || true
ldd "$magnetoc" | awk '/=> \// { print $1, $3 }' | while read -r name path; do
  case "$name" in libc.so*|libm.so*|ld-linux*|libdl.so*|libpthread.so*|librt.so*) continue ;; esac
  cp -L "$path" "$out/lib/$name"
done
cat > "$out/bin/magnetoc" <<'WRAP'
#!/usr/bin/env bash
# magnetoc with the shared libraries packed beside it (tools/gpu/pack_device_kit.sh).
kit="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export LD_LIBRARY_PATH="$kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$kit/bin/magnetoc.bin" "$@"
WRAP
chmod +x "$out/bin/magnetoc"
"$out/bin/magnetoc" --version >/dev/null
echo "device kit: $out ($(du -sh "$out" | cut -f1): magnetoc and $(ls "$out/lib" | wc -l) libraries: $(ls "$out/lib" | tr '\n' ' '))"
