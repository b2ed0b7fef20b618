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
# Under bubblewrap the engine also lays a copy of this file over the
# interpreter's own sitecustomize in the standard library's folder, which
# Python imports whatever a check does to PYTHONPATH, and under -E and -I:
# that copy carries the content of the one it hides (CHAINED) and runs it.
# And it lays the standard library's encodings/__init__.py carrying this
# file (EARLY) at its end: Python imports encodings at every start, -S
# too, before the folder of the script or the current folder is on
# sys.path and before site-packages is: that copy puts a finder in place
# for the standard library's names alone (EARLY), which the first of the
# other copies replaces with the whole one once site has run.
import os
import sys

# (path, source) of the interpreter's own sitecustomize this copy is laid
# over; None for the copy on PYTHONPATH, and where there was none.
CHAINED = None

# True in the copy run at the end of encodings/__init__.py: nothing but
# the builtin, the frozen and the standard library's modules can be
# imported yet, sys.stderr is not there yet, and site has not run.
EARLY = False

# The modules the test runners import themselves (pytest's dependencies).
RUNNER_DEPS = frozenset(("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "exceptiongroup", "tomli",
                         "colorama", "pygments", "nose2", "hypothesis", "coverage", "xdist", "pytest_cov",
                         "typing_extensions"))


def _looprinter_guard():
    # importlib's own, without importing importlib (EARLY): the classes
    # importlib.machinery names.
    import _frozen_importlib as bootstrap
    import _frozen_importlib_external as external

    extra = set()
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p:
            extra.add(os.path.abspath(p))
    # At this point sys.path is PYTHONPATH, then the interpreter's own
    # paths (the standard library, then site-packages): the folder of the
    # script or the current folder comes later.
    trusted = [p for p in sys.path if p and os.path.abspath(p) not in extra]
    # Once: the one installed EARLY is replaced by the whole one.
    have = [f for f in sys.meta_path if getattr(f, "__name__", "") == "LooprinterStdlibFirst"]
    if not have or (not EARLY and all(getattr(f, "early", False) for f in have)):
        _looprinter_install(trusted, bootstrap, external)
        for f in have:
            sys.meta_path.remove(f)
    if EARLY or CHAINED is not None:
        return  # the caller runs the content this copy is laid over
    here = os.path.dirname(os.path.abspath(__file__))
    # The interpreter's own sitecustomize (a distribution's), which this one
    # hides by coming first, runs as it would have (the copy laid over the
    # standard library's, which installs nothing twice, among them).
    finder = external.PathFinder
    spec = finder.find_spec("sitecustomize", [p for p in trusted if os.path.abspath(p) != here])
    if spec is not None and spec.loader is not None:
        mod = bootstrap.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception:
            pass


def _looprinter_install(trusted, bootstrap, external):
    std = getattr(sys, "stdlib_module_names", None)
    if not std:
        return  # Python before 3.10: no list of the standard library's names
    # The standard library's folder, from the interpreter itself (no
    # module is imported for it: a shadow of sysconfig would run first).
    roots = set()
    for v in (getattr(sys, "_stdlib_dir", None), os.path.dirname(getattr(os, "__file__", None) or ""),
              os.path.join(sys.base_prefix, getattr(sys, "platlibdir", "lib"), "python%d.%d" % sys.version_info[:2]),
              os.path.join(sys.base_prefix, "Lib")):
        if v and os.path.isdir(v):
            roots.add(os.path.abspath(v))

    def in_stdlib(p):
        a = os.path.abspath(p)
        return any(a == r or a.startswith(r + os.sep) for r in roots) and "-packages" not in a

    # All of sys.path: a PYTHONPATH that names the standard library's
    # folder does not take it out.
    stdpaths = [p for p in sys.path if p and in_stdlib(p)]
    sitepaths = [p for p in trusted if p not in stdpaths]
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
    # What Python imported before this file (a .pth file of site-packages
    # imports modules at start) came in Python's order: a standard-library
    # module imported from the project (PYTHONPATH=src) is refused here.
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if "." in name or name not in std or not isinstance(f, str) or in_stdlib(f) or "-packages" in f:
            continue
        msg = "looprinter: the standard library's %s was imported from %s before the engine's guard\n" % (name, f)
        os.write(2, msg.encode("utf-8", "surrogateescape"))
        os._exit(3)
    finder = external.PathFinder
    builtin, frozen = bootstrap.BuiltinImporter, bootstrap.FrozenImporter

    class LooprinterStdlibFirst:
        """Top-level standard-library names from the standard library,
        installed distributions' names from site-packages."""

        early = EARLY

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


_looprinter_guard()
del _looprinter_guard, _looprinter_install
if CHAINED is not None:
    exec(compile(CHAINED[1], CHAINED[0], "exec"))
