"""rlfit: the Rocket League ball and car models of the rlfit tools, from Python.

The compiled extension rlfit._rlfit (pybind11 over the library rlsim and rlfit are built from)
holds every call; this package re-exports it, so `import rlfit` and every call keep working
(python/README.md). rlfit.dask runs replay, fit and cross-validation on a Dask cluster.
"""
from rlfit._rlfit import *  # noqa: F401,F403  (the module's public names)
from rlfit._rlfit import BALL_ROW_S, TICK_S, InputError, InternalError, __version__  # noqa: F401
from rlfit._rlfit import __doc__ as _extension_doc

__doc__ = (__doc__ or "") + "\n" + (_extension_doc or "")
