import json, sys
d = json.load(open(sys.argv[1]))
med = {b["name"].split("/")[1]: b["real_time"] for b in d["benchmarks"]
       if "/b16_hq32_hkv8_d128_q1_kv32768/cold" in b["name"] and b.get("aggregate_name") == "median"}
print(f"b16 KV 32768 cold medians {med}")
sys.exit(0 if med["ref_kv_read"] < min(med["decode_splitk"], med["torch_sdpa_cudnn"]) else 1)
