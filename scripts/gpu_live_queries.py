#!/usr/bin/env python3
"""On the GPU host: what the live driver and NVML queries of a report cost, in fresh processes.

A repeated `cudadiag --json --no-selftest` is bounded by its two live workers (the driver's and
NVML's), which are never cached. This times, in a fresh interpreter each, dlopen of libcuda.so.1 and
cuInit, the device count and attributes, and dlopen of libnvidia-ml.so.1, nvmlInit_v2 and each NVML
query the NVML worker makes, three times each and then both side by side, so that the report's
worker times can be split into process start, library load, initialisation and queries.

    python3 scripts/gpu_live_queries.py > live-queries.json      (the venv's python works too)
"""
import ctypes, os, subprocess, sys, time, json
CHILD = r'''
import ctypes, time, json, sys
t0=time.perf_counter(); out={}
which=sys.argv[1]
if which=="cuda":
    lib=ctypes.CDLL("libcuda.so.1"); out["dlopen_ms"]=(time.perf_counter()-t0)*1e3
    t=time.perf_counter(); r=lib.cuInit(0); out["cuInit_ms"]=(time.perf_counter()-t)*1e3; out["rc"]=r
    n=ctypes.c_int(); t=time.perf_counter(); lib.cuDeviceGetCount(ctypes.byref(n)); out["count_ms"]=(time.perf_counter()-t)*1e3
    d=ctypes.c_int(); lib.cuDeviceGet(ctypes.byref(d),0)
    v=ctypes.c_int(); t=time.perf_counter()
    for a in range(1,130): lib.cuDeviceGetAttribute(ctypes.byref(v),a,d)
    out["attrs_ms"]=(time.perf_counter()-t)*1e3
    m=ctypes.c_size_t(); t=time.perf_counter(); lib.cuDeviceTotalMem_v2(ctypes.byref(m),d); out["totalmem_ms"]=(time.perf_counter()-t)*1e3
else:
    lib=ctypes.CDLL("libnvidia-ml.so.1"); out["dlopen_ms"]=(time.perf_counter()-t0)*1e3
    t=time.perf_counter(); r=lib.nvmlInit_v2(); out["nvmlInit_ms"]=(time.perf_counter()-t)*1e3; out["rc"]=r
    h=ctypes.c_void_p(); t=time.perf_counter(); lib.nvmlDeviceGetHandleByIndex_v2(0,ctypes.byref(h)); out["handle_ms"]=(time.perf_counter()-t)*1e3
    buf=ctypes.create_string_buffer(96)
    for name,call in [("name",lambda: lib.nvmlDeviceGetName(h,buf,96)),("uuid",lambda: lib.nvmlDeviceGetUUID(h,buf,96)),
        ("ecc",lambda: lib.nvmlDeviceGetEccMode(h,ctypes.byref(ctypes.c_int()),ctypes.byref(ctypes.c_int()))),
        ("ecc_total",lambda: lib.nvmlDeviceGetTotalEccErrors(h,0,1,ctypes.byref(ctypes.c_ulonglong()))),
        ("remapped",lambda: lib.nvmlDeviceGetRemappedRows(h,*(ctypes.byref(ctypes.c_uint()) for _ in range(4)))),
        ("pcie_gen",lambda: lib.nvmlDeviceGetCurrPcieLinkGeneration(h,ctypes.byref(ctypes.c_uint()))),
        ("throttle",lambda: lib.nvmlDeviceGetCurrentClocksThrottleReasons(h,ctypes.byref(ctypes.c_ulonglong()))),
        ("persistence",lambda: lib.nvmlDeviceGetPersistenceMode(h,ctypes.byref(ctypes.c_int())))]:
        t=time.perf_counter(); rc=call(); out[name+"_ms"]=(time.perf_counter()-t)*1e3
    t=time.perf_counter(); lib.nvmlShutdown(); out["shutdown_ms"]=(time.perf_counter()-t)*1e3
out["total_ms"]=(time.perf_counter()-t0)*1e3
print(json.dumps(out))
'''
res={}
for which in ("cuda","nvml","cuda","nvml","cuda","nvml"):
    t=time.perf_counter()
    o=subprocess.run([sys.executable,"-c",CHILD,which],capture_output=True,text=True)
    wall=(time.perf_counter()-t)*1e3
    d=json.loads(o.stdout) if o.stdout else {"err":o.stderr[-300:]}
    d["process_wall_ms"]=wall
    res.setdefault(which,[]).append(d)
# both at once, as the report does
t=time.perf_counter()
ps=[subprocess.Popen([sys.executable,"-c",CHILD,w],stdout=subprocess.PIPE,text=True) for w in ("cuda","nvml")]
outs=[json.loads(p.communicate()[0]) for p in ps]
res["together"]={"wall_ms":(time.perf_counter()-t)*1e3,"cuda":outs[0],"nvml":outs[1]}
print(json.dumps(res,indent=1))
