"""ctypes mirror of kernels/cub_selftest.h (ABI 2), shared by the kernels tests."""
import ctypes

ABI = 2
EXPORTS = {"cudadiag_cub_selftest_abi", "cudadiag_cub_selftest_info", "cudadiag_cub_selftest_run"}
REDUCE_F32, REDUCE_I32, SORT_U32, SORT_U64 = 1, 2, 3, 4


class Params(ctypes.Structure):
    _fields_ = [("which", ctypes.c_int32), ("count", ctypes.c_uint64), ("warmup", ctypes.c_int32),
                ("repetitions", ctypes.c_int32), ("stream", ctypes.c_void_p), ("warmup_ms", ctypes.c_int32)]


class Result(ctypes.Structure):
    _fields_ = [("cuda_error", ctypes.c_int32), ("error_name", ctypes.c_char * 64),
                ("error_where", ctypes.c_char * 128), ("verified", ctypes.c_int32), ("mismatch", ctypes.c_char * 256),
                ("median_ms", ctypes.c_double), ("best_ms", ctypes.c_double), ("max_ms", ctypes.c_double),
                ("warmup_runs", ctypes.c_int32), ("warmup_elapsed_ms", ctypes.c_double), ("bytes_per_run", ctypes.c_double),
                ("keys_per_run", ctypes.c_double), ("device_bytes", ctypes.c_uint64),
                ("temp_storage_bytes", ctypes.c_uint64)]


class ModuleInfo(ctypes.Structure):
    _fields_ = [("abi", ctypes.c_int32), ("cuda_version_built", ctypes.c_int32), ("cccl_version", ctypes.c_int32),
                ("runtime_version", ctypes.c_int32), ("driver_version", ctypes.c_int32),
                ("archs", ctypes.c_char * 128)]


def load(path):
    """Opens the module and types its three entry points."""
    module = ctypes.CDLL(path)
    module.cudadiag_cub_selftest_abi.restype = ctypes.c_int32
    module.cudadiag_cub_selftest_abi.argtypes = []
    module.cudadiag_cub_selftest_info.restype = ctypes.c_int32
    module.cudadiag_cub_selftest_info.argtypes = [ctypes.POINTER(ModuleInfo)]
    module.cudadiag_cub_selftest_run.restype = ctypes.c_int32
    module.cudadiag_cub_selftest_run.argtypes = [ctypes.POINTER(Params), ctypes.POINTER(Result)]
    return module


def describe(result):
    return (f"error={result.cuda_error} {result.error_name.decode()} at '{result.error_where.decode()}' "
            f"verified={result.verified} mismatch='{result.mismatch.decode()}' median={result.median_ms:.4f} ms "
            f"best={result.best_ms:.4f} ms device_bytes={result.device_bytes} temp={result.temp_storage_bytes}")
