#!/bin/sh
# Regenerates the bundled PTX (copy, smid, fma, memtest .ptx) from their .cu sources; see kernels/README.md.
# nvcc 13 cannot target anything older than compute_75, so the PTX is generated for compute_75 and
# its header lowered to ISA 7.0 / sm_70 (CUDA 11.0 drivers); ptxas then proves that the body uses
# nothing newer. Usage: kernels/ptx/regenerate.sh   (NVCC, PTXAS override the tools)
set -eu
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
PTXAS=${PTXAS:-ptxas}
for name in copy smid fma memtest; do
  "$NVCC" -ptx -arch=compute_75 -O3 -o "$name.ptx.tmp" "$name.cu"
  {
    printf '//\n// cudadiag bundled PTX, generated from kernels/ptx/%s.cu by kernels/ptx/regenerate.sh:\n' "$name"
    printf '// nvcc -ptx -arch=compute_75, then .version lowered to 7.0 and .target to sm_70.\n'
    sed -e 's/^\.version .*/.version 7.0/' -e 's/^\.target .*/.target sm_70/' "$name.ptx.tmp"
  } > "$name.ptx"
  rm -f "$name.ptx.tmp"
  for arch in sm_75 sm_80 sm_90; do
    "$PTXAS" -arch="$arch" -o /dev/null "$name.ptx"
  done
  echo "$name.ptx: ok"
done
