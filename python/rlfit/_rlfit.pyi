# Type stubs of the compiled extension rlfit._rlfit (python/rlfit_module.cc and
# python/sim_objects.cc): every public name, with units and array shapes in the docstrings.
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_Vec = Union[Sequence[float], npt.NDArray[Any]]
_Array = npt.NDArray[np.float64]

__version__: str
TICK_S: float
"""One physics tick, s (1/120)."""
BALL_ROW_S: float
"""One row of the ball recordings, s (1/60.96)."""

class InputError(ValueError):
    """Bad input: names the file (or argument), 1-based row and column (0 when none)."""

    file: str
    row: int
    column: int

class InternalError(RuntimeError): ...

def models() -> List[str]: ...
def resource_root() -> str: ...
def data_root(data_root: _Path = "") -> str: ...
def load_coefficients(model: str, coeffs: _Path = "") -> Dict[str, Any]: ...

class Model:
    """A model with its coefficients; batch predictions over flat state rows."""

    def __init__(
        self,
        name: str,
        coeffs: _Path = "",
        data_root: _Path = "",
        values: Optional[_Vec] = None,
        recording_drift: bool = False,
        recording_input_delay: bool = False,
    ) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def columns(self) -> List[str]: ...
    @property
    def coefficients(self) -> Dict[str, Any]: ...
    @property
    def default_dt_s(self) -> float: ...
    def predict(
        self, state: _Vec, duration_s: float, dt_s: float = 0.0, controls: Optional[npt.ArrayLike] = None
    ) -> _Array: ...
    def rollout(
        self, state: _Vec, controls: Optional[npt.ArrayLike], duration_s: float, dt_s: float = 0.0
    ) -> _Array: ...
    def predict_batch(
        self,
        states: npt.ArrayLike,
        duration_s: float,
        dt_s: float = 0.0,
        controls: Optional[npt.ArrayLike] = None,
        threads: int = 0,
    ) -> _Array: ...
    def step(self, state: _Vec, controls: Optional[npt.ArrayLike] = None, dt_s: float = 0.0) -> _Array: ...
    def step_ticks(self, state: _Vec, ticks: int) -> _Array: ...
    def ball_contact(self, center: _Vec) -> Dict[str, Any]: ...

class Arena:
    def __init__(self, data_root: _Path = "") -> None: ...
    @property
    def triangle_count(self) -> int: ...
    def contains(self, point: _Vec) -> bool:
        """True if the point (x, y, z, uu) is inside the arena: each of the six axis-aligned
        rays from it first meets a triangle's front face (Arena::Contains; a sampling aid, the
        mesh is open)."""
        ...
    def collide(self, center: _Vec, radius: float) -> Dict[str, Any]: ...
    def collide_batch(self, centers: npt.ArrayLike, radius: float, threads: int = 0) -> Dict[str, Any]: ...

def read_recording(path: _Path, data_root: _Path = "", keep_going: bool = False) -> List[Dict[str, Any]]: ...
def replay(
    model: str,
    paths: Sequence[_Path] = ...,
    coeffs: _Path = "",
    data_root: _Path = "",
    horizons_s: Sequence[float] = ...,
    window_s: float = 0.5,
    keep_going: bool = False,
) -> Dict[str, Any]: ...
def _run_shard_task(task: str, payload: bytes) -> bytes: ...
def _dask_replay(options: Dict[str, Any], map: Callable[[str, List[bytes]], Sequence[bytes]]) -> Dict[str, Any]: ...
def _dask_fit(options: Dict[str, Any], map: Callable[[str, List[bytes]], Sequence[bytes]]) -> Dict[str, Any]: ...
def _dask_crossval(options: Dict[str, Any], map: Callable[[str, List[bytes]], Sequence[bytes]]) -> Dict[str, Any]: ...

class Controls:
    """The inputs of a tick (RLBot's SimpleControllerState): sticks in [-1, 1], buttons bool."""

    throttle: float
    steer: float
    pitch: float
    yaw: float
    roll: float
    jump: bool
    boost: bool
    handbrake: bool
    def __init__(
        self,
        throttle: float = 0.0,
        steer: float = 0.0,
        pitch: float = 0.0,
        yaw: float = 0.0,
        roll: float = 0.0,
        jump: bool = False,
        boost: bool = False,
        handbrake: bool = False,
    ) -> None: ...
    def to_array(self) -> _Array:
        """(8,) throttle, steer, pitch, yaw, roll, jump, boost, handbrake (a rollout row without t_s)."""
    def copy(self) -> "Controls": ...
    def __copy__(self) -> "Controls": ...
    def __deepcopy__(self, memo: Any) -> "Controls": ...
    def __eq__(self, other: object) -> bool: ...
    def __getstate__(self) -> Tuple[float, float, float, float, float, bool, bool, bool]: ...
    def __setstate__(self, state: Tuple[float, float, float, float, float, bool, bool, bool]) -> None: ...

class Ball:
    """The ball: position uu, velocity uu/s, angular_velocity rad/s (world axes)."""

    def __init__(
        self,
        position: _Vec,
        velocity: _Vec = ...,
        angular_velocity: _Vec = ...,
        *,
        coeffs: str = "",
        data_root: str = "",
    ) -> None: ...
    @property
    def position(self) -> _Array:
        """(3,) uu."""
    @property
    def velocity(self) -> _Array:
        """(3,) uu/s."""
    @property
    def angular_velocity(self) -> _Array:
        """(3,) rad/s, world axes."""
    @property
    def time(self) -> float:
        """s stepped since construction."""
    def step(self, dt: float) -> None:
        """Advance dt s, a whole number (>= 1) of 1/120 s ticks (else ValueError)."""
    def copy(self) -> "Ball": ...
    def __copy__(self) -> "Ball": ...
    def __deepcopy__(self, memo: Any) -> "Ball": ...
    def __getstate__(self) -> Tuple[int, str, str, int, List[float]]:
        """(version, coeffs, data_root, ticks stepped, the state's numbers): what pickle carries."""
    def __setstate__(self, state: Tuple[int, str, str, int, List[float]]) -> None: ...
    def to_array(self) -> _Array:
        """(9,) x, y, z, vx, vy, vz, wx, wy, wz (a Model('ball').predict row without t_s)."""
    @staticmethod
    def from_array(state: _Vec, *, coeffs: str = "", data_root: str = "") -> "Ball": ...

class Car:
    """A car with its whole state (body, boost 0-100, jump/dodge timers, handbrake level).

    orientation: (3, 3), columns forward, left, up in world axes; pitch/yaw/roll in rad as the
    datasets' Euler angles, R = Rz(yaw) Ry(-pitch) Rx(-roll).
    """

    def __init__(
        self,
        position: _Vec,
        velocity: _Vec = ...,
        angular_velocity: _Vec = ...,
        *,
        orientation: Optional[npt.ArrayLike] = None,
        pitch: float = 0.0,
        yaw: float = 0.0,
        roll: float = 0.0,
        boost: float = 100.0,
        on_ground: Optional[bool] = None,
        jumped: bool = False,
        double_jumped: bool = False,
        coeffs: str = "",
        data_root: str = "",
    ) -> None: ...
    @property
    def position(self) -> _Array:
        """(3,) uu."""
    @property
    def velocity(self) -> _Array:
        """(3,) uu/s."""
    @property
    def angular_velocity(self) -> _Array:
        """(3,) rad/s, world axes."""
    @property
    def orientation(self) -> _Array:
        """(3, 3): columns forward, left, up."""
    @property
    def forward(self) -> _Array: ...
    @property
    def up(self) -> _Array: ...
    @property
    def boost(self) -> float:
        """Boost amount, 0-100 (drains 100/3 per second held)."""
    @property
    def on_ground(self) -> bool: ...
    @property
    def jumped(self) -> bool: ...
    @property
    def double_jumped(self) -> bool: ...
    @property
    def dodged(self) -> bool: ...
    @property
    def jump_timer(self) -> float:
        """s since the first jump's impulse."""
    @property
    def dodge_timer(self) -> float:
        """s since the dodge started."""
    @property
    def handbrake(self) -> float:
        """Handbrake level 0-1."""
    @property
    def time(self) -> float:
        """s stepped since construction."""
    def step(self, controls: Controls, dt: float) -> None:
        """Advance dt s (a whole number >= 1 of 1/120 s ticks, else ValueError) holding controls."""
    def copy(self) -> "Car": ...
    def __copy__(self) -> "Car": ...
    def __deepcopy__(self, memo: Any) -> "Car": ...
    def __getstate__(self) -> Tuple[int, str, str, int, List[float]]:
        """(version, coeffs, data_root, ticks stepped, the state's numbers): what pickle carries."""
    def __setstate__(self, state: Tuple[int, str, str, int, List[float]]) -> None: ...
    def to_array(self) -> _Array:
        """(12,) x, y, z, vx, vy, vz, wx, wy, wz, pitch, yaw, roll (a Model('car').predict row without t_s)."""
    @staticmethod
    def from_array(
        state: _Vec,
        *,
        boost: float = 100.0,
        on_ground: Optional[bool] = None,
        jumped: bool = False,
        double_jumped: bool = False,
        coeffs: str = "",
        data_root: str = "",
    ) -> "Car": ...
