# Types of the cudadiag package (docs/python.md). The keyword options are the C API's options JSON
# keys; their values are JSON values.
from typing import Any, Callable, Dict, Literal, Optional, Tuple, Union

__version__: str

Verdict = Literal["ok", "warning", "error"]
Severity = Literal["info", "warning", "error"]

class Error(Exception):
    status: int
    def __init__(self, message: str, status: int) -> None: ...

class Finding:
    id: str
    severity: Severity
    message: str
    remedy: str
    def __init__(self, id: str, severity: Severity, message: str, remedy: str) -> None: ...

class Result:
    verdict: Verdict
    exit_code: int
    findings: Tuple[Finding, ...]
    def __init__(self, verdict: Verdict, exit_code: int, findings: Tuple[Finding, ...],
                 json_text: Union[str, Callable[[], str]]) -> None: ...
    def __bool__(self) -> bool: ...
    def json(self) -> Dict[str, Any]: ...

class RequirementError(Exception):
    findings: Tuple[Finding, ...]
    result: Result
    def __init__(self, findings: Tuple[Finding, ...], result: Result) -> None: ...

def report(**options: Any) -> Dict[str, Any]: ...
def quick_check(**options: Any) -> Result: ...
def require(*specs: str, **options: Any) -> None: ...
def find(name: str, **options: Any) -> Optional[str]: ...
def library_version() -> str: ...
