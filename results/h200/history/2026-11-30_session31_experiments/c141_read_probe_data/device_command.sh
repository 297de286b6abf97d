set -u
mkdir -p "$OUT/o141"; cd .devcall/s
cp c141.sh readprobe.cu "$OUT/o141/"
nvidia-smi --query-gpu=name,uuid --format=csv > "$OUT/o141/gpu.txt" 2>&1
nvcc -O3 -arch=sm_90a -std=c++17 -o readprobe readprobe.cu > "$OUT/o141/build.txt" 2>&1
for m in const rand const rand; do timeout 60 ./readprobe $m; done > "$OUT/o141/probe.txt" 2>&1
sort -k2,2 -k1,1 "$OUT/o141/probe.txt" | grep cold
cd "$OUT" && tar czf o141.tgz o141 && rm -rf o141
