#!/usr/bin/env bash
# Session 29, c132: why decode_kv_l2_policy.patch's =61 (K/V copies evict-last) reads ~4% faster at b1 GQA
# KV 4096 cold (c129 0.944, c130 0.957) and nowhere else: Nsight Compute over the split and combine kernels
# of the default and =61 builds at that shape, in the harness's cold state (NCU_CACHE=none, application
# replay: every pass follows the harness's own flush), DRAM bytes read and written, L2 hit rate, duration.
set -u
O=$OUT/o132; mkdir -p "$O"
start=$(date +%s)
t() { echo "$* at $(( $(date +%s) - start )) s" >> "$O/exp.txt"; }
cp .devcall/s/c132.sh "$O/device_command.sh"
nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$O/gpu_start.txt" 2>&1
PATCH=results/h200/history/2026-11-30_session29_experiments/decode_kv_l2_policy.patch TEST_FILTER='*DecodeSplitk*hq32*' PASSES=1 \
SHAPES=b1_hq32_hkv8_d128_q1_kv4096,b1_hq32_hkv8_d128_q1_kv16384 DTYPES=bf16 BENCH_FILTER='^attention/decode_splitk/bf16/decode/.*/cold' \
NCU_SHAPES=b1_hq32_hkv8_d128_q1_kv4096 NCU_CACHE=none NCU_REPLAY=application \
NCU_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,sm__cycles_elapsed.avg.per_second \
timeout 470 scripts/gpu_experiments.sh "$O/x" SB_DECODE_EXPERIMENT=61 > "$O/exp.log" 2>&1
t "experiments rc=$?"
cat "$O/exp.txt" "$O/gpu_start.txt"; cat "$O/x/summary.txt" 2>/dev/null | head -20
for f in "$O"/x/ncu_*.csv.gz; do echo "== $f"; zcat "$f" | python3 -c "
import csv,sys
rows=list(csv.reader(sys.stdin))
h=next(i for i,r in enumerate(rows) if 'Kernel Name' in r)
hdr=rows[h]; cols=[c for c in hdr if c.startswith(('gpu__','dram__','lts__','sm__'))]
for r in rows[h+2:]:
    if len(r)==len(hdr): print(r[hdr.index('Kernel Name')][:40], *[c.split('.')[0][:18]+'='+r[hdr.index(c)] for c in cols])
" | head -40; done
tail -5 "$O/exp.log"
cd "$OUT" && tar czf o132.tgz o132 && rm -rf o132
