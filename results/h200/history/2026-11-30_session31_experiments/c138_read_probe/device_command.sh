set -u
mkdir -p "$OUT/o138"
cd .devcall/s
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem --format=csv > "$OUT/o138/gpu.txt" 2>&1
nvcc -O3 -arch=sm_90a -std=c++17 -o readprobe readprobe.cu > "$OUT/o138/build.txt" 2>&1
timeout 200 ./readprobe > "$OUT/o138/probe.txt" 2>&1; echo "rc=$?" >> "$OUT/o138/probe.txt"
cat "$OUT/o138/probe.txt"
cd "$OUT" && tar czf o138.tgz o138 && rm -rf o138
