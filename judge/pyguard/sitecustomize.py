# The engine's sitecustomize for the judge's checks (looprinter). It is
# first on PYTHONPATH, so Python's site module imports it at start, before
# any code of the project. It puts a finder at the front of sys.meta_path:
# a top-level module named like one of the standard library's is found only
# in the standard library, and one named like a top-level module of the
# installed distributions that the loop's test files import
# (LOOPRINTER_PY_DIST) or a test runner imports only in site-packages,
# whatever the project puts on sys.path (pytest's rootdir, the script's
# folder, the current folder).
# The project's own modules the loop started with (LOOPRINTER_PY_OWN) are
# left to Python's own order. Then the next sitecustomize of the
# interpreter's own paths (a distribution's) runs as it would have.
import os
import sys

# The modules the test runners import themselves (pytest's dependencies).
RUNNER_DEPS = frozenset(("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "exceptiongroup", "tomli",
                         "colorama", "pygments", "nose2", "hypothesis", "coverage", "xdist", "pytest_cov",
                         "typing_extensions"))


def _looprinter_guard():
    import importlib.machinery as machinery
    import importlib.util

    std = getattr(sys, "stdlib_module_names", None)
    if not std:
        return  # Python before 3.10: no list of the standard library's names
    here = os.path.dirname(os.path.abspath(__file__))
    extra = set()
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p:
            extra.add(os.path.abspath(p))
    # At this point sys.path is PYTHONPATH, then the interpreter's own
    # paths (the standard library, then site-packages): the folder of the
    # script or the current folder comes later.
    trusted = [p for p in sys.path if p and os.path.abspath(p) not in extra]
    import sysconfig

    roots = set()
    for k in ("stdlib", "platstdlib"):
        v = sysconfig.get_paths().get(k)
        if v:
            roots.add(os.path.abspath(v))
    stdpaths, sitepaths = [], []
    for p in trusted:
        a = os.path.abspath(p)
        if any(a == r or a.startswith(r + os.sep) for r in roots) and "-packages" not in a:
            stdpaths.append(p)
        else:
            sitepaths.append(p)
    if not stdpaths:
        stdpaths = [p for p in trusted if p.endswith(".zip")] or trusted
    dist = set()
    for p in sitepaths:
        try:
            entries = os.listdir(p)
        except OSError:
            continue
        for e in entries:
            if e.endswith((".dist-info", ".egg-info", ".pth", ".egg-link")) or e.startswith(("_distutils_hack", "__")):
                continue
            n = e.split(".", 1)[0]
            if n.isidentifier() and (e == n or e.endswith((".py", ".so", ".pyd", ".pyc"))):
                dist.add(n)
    own = set(n for n in os.environ.get("LOOPRINTER_PY_OWN", "").split(",") if n)
    # Of the installed names, those the loop's test files import and the
    # test runners' own: a sloppy distribution's tests/ or utils/ must not
    # hide a new package of the project's.
    wanted = set(n for n in os.environ.get("LOOPRINTER_PY_DIST", "").split(",") if n)
    if "*" not in wanted:
        wanted |= RUNNER_DEPS
        dist &= wanted
    std = frozenset(std) - own
    dist = frozenset(dist - std - own)
    finder = machinery.PathFinder
    builtin, frozen = machinery.BuiltinImporter, machinery.FrozenImporter

    class LooprinterStdlibFirst:
        """Top-level standard-library names from the standard library,
        installed distributions' names from site-packages."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            if path is not None or "." in name:
                return None
            if name in std:
                where = stdpaths
            elif name in dist:
                where = sitepaths
            else:
                return None
            spec = builtin.find_spec(name) or frozen.find_spec(name)
            if spec is None:
                spec = finder.find_spec(name, where)
            return spec

        @staticmethod
        def invalidate_caches():
            pass

    sys.meta_path.insert(0, LooprinterStdlibFirst)
    # The interpreter's own sitecustomize (a distribution's), which this one
    # hides by coming first, runs as it would have.
    spec = finder.find_spec("sitecustomize", [p for p in trusted if os.path.abspath(p) != here])
    if spec is not None and spec.loader is not None:
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception:
            pass


_looprinter_guard()
del _looprinter_guard
