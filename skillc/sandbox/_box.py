"""The confinement supervisor: standard library only, run as a script (`python -I _box.py SPEC`) or imported.

    python -I _box.py SPEC-JSON

It is the first process of the box: it leaves the parent's namespaces where it can (user, network, PID),
becomes the reaper of everything it starts, forks the target, and in the target — before `exec` — sets
the resource limits and the Landlock rules, so the target and all it starts are confined and cannot signal
the supervisor. It waits for the target at most `timeout_s`, then kills whatever of the box is left (the
PID namespace dies with its first process; without one, every orphan the supervisor inherited as reaper is
killed by id), and writes one JSON status line to the file descriptor `status_fd`:
{"layers": [...], "missing": {layer: why}, "exit": int|null, "signal": int|null, "timed_out": bool,
 "strays": int}.

`skillc.sandbox.box` imports this module too, for `available_layers` (what this machine offers).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import resource
import signal
import sys
import time

# ------------------------------------------------------------------ syscalls

_LIBC = ctypes.CDLL(None, use_errno=True)
_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446), "riscv64": (444, 445, 446)}
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 38, 36
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000

# Landlock: filesystem rights by ABI version, network rights (ABI 4), scopes (ABI 6)
_FS_V1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_READ_FILE, _READ_DIR, _EXECUTE, _WRITE_FILE = 1 << 2, 1 << 3, 1 << 0, 1 << 1
_READ = _READ_FILE | _READ_DIR | _EXECUTE
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1, 2


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _syscall(number: int, *args: object) -> int:
    """A raw syscall; OSError on failure."""
    result = int(_LIBC.syscall(ctypes.c_long(number), *args))
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def _prctl(option: int, value: int) -> None:
    """prctl(option, value); OSError on failure."""
    if _LIBC.prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none (or it is disabled)."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None or not sys.platform.startswith("linux"):
        return 0
    try:
        return _syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except OSError:
        return 0


def _fs_rights(abi: int) -> int:
    """Every filesystem right the ABI knows."""
    rights = _FS_V1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _add_path(ruleset: int, path: str, rights: int, abi: int) -> None:
    """Allow `rights` beneath `path` (only the file rights when it is a file); a missing path is skipped."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        rights &= _fs_rights(abi)
        if rights:
            attr = _PathBeneath(rights, fd)
            _syscall(_SYSCALLS[platform.machine()][1], ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(attr),
                     ctypes.c_uint32(0))
    finally:
        os.close(fd)


def apply_landlock(readable: list[str], writable: list[str], *, network: bool, restrict_reads: bool) -> list[str]:
    """Confine this process and its future children: writes only beneath `writable`, reads (when
    `restrict_reads`) only beneath `readable` and `writable`, no TCP unless `network`, no signals or abstract
    sockets out of the box. The layers applied, by name (OSError when the kernel refuses)."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError(errno.ENOSYS, "Landlock is not available")
    handled = _fs_rights(abi) & ~(0 if restrict_reads else _READ)
    attr = _RulesetAttr(handled, 0, 0)
    applied = ["landlock-write"] + (["landlock-read"] if restrict_reads else [])
    size = 8
    if abi >= 4 and not network:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        applied.append("landlock-tcp")
        size = 16
    if abi >= 6:
        attr.scoped = _SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX
        applied.append("landlock-scope")
        size = 24
    numbers = _SYSCALLS[platform.machine()]
    ruleset = _syscall(numbers[0], ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        if restrict_reads:
            for path in readable:
                _add_path(ruleset, path, _READ, abi)
        for path in writable:
            _add_path(ruleset, path, handled, abi)
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        _syscall(numbers[2], ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return applied


def _write_control(path: str, text: str) -> None:
    """Write a kernel control file (a /proc/self id map, a cgroup's `pids.max` or `cgroup.procs`) in one write."""
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def enter_namespaces(*, network: bool) -> list[str]:
    """Leave the parent's user, PID and (unless `network`) network namespaces; the layers entered.

    As an unprivileged user the user namespace comes first (it grants the rest); the process keeps its own
    uid and gid inside. OSError when the kernel refuses all of it.
    """
    uid, gid = os.geteuid(), os.getegid()
    rest = CLONE_NEWPID | (0 if network else CLONE_NEWNET)
    names = ["pid-namespace"] + ([] if network else ["net-namespace"])
    if _LIBC.unshare(ctypes.c_int(CLONE_NEWUSER | rest)) == 0:
        _write_control("/proc/self/setgroups", "deny")
        _write_control("/proc/self/uid_map", f"{uid} {uid} 1")
        _write_control("/proc/self/gid_map", f"{gid} {gid} 1")
        return ["user-namespace", *names]
    err = ctypes.get_errno()
    if uid == 0 and _LIBC.unshare(ctypes.c_int(rest)) == 0:  # root without user namespaces (some containers)
        return names
    raise OSError(err, os.strerror(err))


def _namespaces_work(network: bool) -> bool:
    """Whether `enter_namespaces` succeeds, tried in a forked child that then exits."""
    pid = os.fork()
    if pid == 0:
        try:
            enter_namespaces(network=network)
        except BaseException:  # noqa: BLE001 - any failure means no
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


# ------------------------------------------------------------------ limits


def set_limits(*, cpu_s: int, memory_mb: int | None, file_mb: int, processes: int | None) -> None:
    """The target's resource limits (a limit the hard limit forbids is lowered to it). RLIMIT_NPROC counts every
    process of the user in its user namespace, so it is set (`processes`) only in a namespace of the box's own."""
    def cap(kind: int, value: int) -> None:
        _, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, value if hard == resource.RLIM_INFINITY else hard))

    cap(resource.RLIMIT_CPU, cpu_s)
    cap(resource.RLIMIT_FSIZE, file_mb << 20)
    cap(resource.RLIMIT_CORE, 0)
    if processes is not None:
        cap(resource.RLIMIT_NPROC, processes)
    if memory_mb is not None:
        cap(resource.RLIMIT_AS, memory_mb << 20)


#: The prefix of the pids cgroups boxes make (as root, where RLIMIT_NPROC does not hold).
_CGROUP_PREFIX = "skillc-box-"


def _pids_parent() -> str | None:
    """The folder of this process's cgroup in a pids hierarchy (cgroup v1's `pids`, or v2 with the pids
    controller enabled for children), or None."""
    try:
        with open("/proc/self/cgroup", encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            folder = "/sys/fs/cgroup/pids" + path.rstrip("/")
        elif controllers == "":
            root = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup"
            folder = root + path.rstrip("/")
            try:
                with open(folder + "/cgroup.subtree_control", encoding="ascii") as f:
                    if "pids" not in f.read().split():
                        continue
            except OSError:
                continue
        else:
            continue
        if os.path.isdir(folder) and os.access(folder, os.W_OK):
            return folder
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def enter_pids_cgroup(limit: int) -> str:
    """As root, where the kernel does not count processes against RLIMIT_NPROC: a pids cgroup of this box's own,
    holding the supervisor (so the target and all it starts) to `limit` processes; its folder. OSError (with why)
    when there is none to make. Empty boxes' cgroups left by a supervisor that was killed are removed first."""
    parent = _pids_parent()
    if parent is None:
        raise OSError(errno.ENOENT, "no writable pids cgroup hierarchy")
    for name in os.listdir(parent):
        owner = name[len(_CGROUP_PREFIX):]
        if name.startswith(_CGROUP_PREFIX) and owner.isdigit() and not _alive(int(owner)):
            try:
                os.rmdir(os.path.join(parent, name))  # an empty cgroup of a dead supervisor (a non-empty one stays)
            except OSError:
                pass
    folder = os.path.join(parent, f"{_CGROUP_PREFIX}{os.getpid()}")
    os.mkdir(folder)
    try:
        _write_control(folder + "/pids.max", str(limit))
        _write_control(folder + "/cgroup.procs", str(os.getpid()))
    except OSError:
        try:
            os.rmdir(folder)
        finally:
            raise
    return folder


def leave_pids_cgroup(folder: str) -> None:
    """Move the supervisor back to the parent cgroup and remove the box's (best effort: an empty one left behind
    is removed by the next box)."""
    try:
        _write_control(os.path.dirname(folder) + "/cgroup.procs", str(os.getpid()))
        os.rmdir(folder)
    except OSError:
        pass


# ------------------------------------------------------------------ the supervisor


def _children() -> list[int]:
    """The live children of this process (orphans it inherited as reaper included)."""
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children", encoding="ascii") as f:
                found += [int(p) for p in f.read().split()]
        except OSError:
            continue
    return found


def _sweep(deadline_s: float = 5.0) -> int:
    """Kill and reap every process left under this one; how many there were."""
    killed: set[int] = set()
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        alive = _children()
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            if not alive:
                break
        if not alive and not _children():
            break
        time.sleep(0.01)
    return len(killed)


def _exec_target(spec: dict, layers: list[str], report_fd: int) -> None:
    """In the forked target: limits, Landlock, then exec (never returns; exit 127 when exec fails)."""
    try:
        os.close(report_fd)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        set_limits(cpu_s=spec["cpu_s"], memory_mb=spec["memory_mb"], file_mb=spec["file_mb"],
                   processes=spec["processes"] if "user-namespace" in layers else None)
        if "landlock" not in spec["disabled"]:
            apply_landlock(spec["readable"], spec["writable"], network=spec["network"],
                           restrict_reads=spec["restrict_reads"])
        os.chdir(spec["cwd"])
        os.execve(spec["argv"][0], spec["argv"], spec["env"])
    except BaseException as exc:  # noqa: BLE001 - the target could not start: say so on stderr, exit 127
        try:
            os.write(2, f"skillc sandbox: cannot start {spec['argv'][0]}: {exc}\n".encode())
        finally:
            os._exit(127)


def _wait(pid: int, timeout_s: float) -> tuple[int | None, bool]:
    """Wait for the target at most `timeout_s` (reaping orphans on the way); its wait status, and timed out."""
    end = time.monotonic() + timeout_s
    pause = 0.001
    while True:
        try:
            got, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None, False
        if got == pid:
            return status, False
        if got == 0:
            if time.monotonic() >= end:
                return None, True
            time.sleep(pause)
            pause = min(pause * 2, 0.02)


def _probe_layers(spec: dict) -> tuple[list[str], dict[str, str]]:
    """Enter the namespaces (unless disabled) and become the reaper; the layers the box has, and those missing
    with why (Landlock's are applied later, by the target, and reported here as the ABI allows)."""
    layers: list[str] = ["session", "rlimits", "minimal-env", "scratch-cwd"]
    missing: dict[str, str] = {}
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        layers.append("reaper")
    except OSError as exc:
        missing["reaper"] = exc.strerror or str(exc)
    no_cgroup = None  # why root's box has no pids cgroup (reported after the other layers)
    if os.geteuid() == 0 and spec.get("processes") is not None:  # root's processes are not counted by RLIMIT_NPROC
        if "pids-cgroup" in spec["disabled"]:
            no_cgroup = "turned off"
        else:
            try:  # before the namespaces: made as root of the machine
                spec["cgroup"] = enter_pids_cgroup(int(spec["processes"]) + 2)  # + the supervisor and its probe
                layers.append("pids-cgroup")
            except OSError as exc:
                no_cgroup = exc.strerror or str(exc)
    if "namespaces" in spec["disabled"]:
        missing["namespaces"] = "turned off"
    elif spec.get("probe") and not _namespaces_work(spec["network"]):  # tried in a throwaway child first: a
        # half-entered namespace cannot be left (the parent asks until one box has entered them)
        missing["namespaces"] = "the kernel refused them (unshare, or the user namespace's id maps)"
    else:
        try:
            layers += enter_namespaces(network=spec["network"])
        except OSError as exc:
            missing["namespaces"] = exc.strerror or str(exc)
    if "landlock" in spec["disabled"]:
        missing["landlock"] = "turned off"
    else:
        abi = landlock_abi()
        if abi < 1:
            missing["landlock"] = "this kernel has no Landlock"
        else:
            layers += ["landlock-write"] + (["landlock-read"] if spec["restrict_reads"] else [])
            if not spec["network"]:
                if abi >= 4:
                    layers.append("landlock-tcp")
                elif "net-namespace" not in layers:
                    missing["network"] = f"Landlock ABI {abi} cannot refuse TCP and no network namespace"
            if abi >= 6:
                layers.append("landlock-scope")
    if not spec["network"] and "net-namespace" not in layers and "landlock-tcp" not in layers:
        missing.setdefault("network", "neither a network namespace nor Landlock's TCP rules are available")
    if no_cgroup is not None:
        missing["pids-cgroup"] = no_cgroup
    return layers, missing


def main() -> None:
    """Run the target described by the JSON spec in argv[1] and report on `status_fd`."""
    spec = json.loads(sys.argv[1])
    report_fd = spec["status_fd"]
    if os.getppid() != spec["parent"]:  # the parent died before PDEATHSIG was set
        os._exit(1)
    layers, missing = _probe_layers(spec)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # the parent stops the box; a stray Ctrl-C must not orphan the target
    pid = os.fork()
    if pid == 0:
        _exec_target(spec, layers, report_fd)
    status, timed_out = _wait(pid, spec["timeout_s"])
    if timed_out:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    strays = _sweep()
    if spec.get("cgroup"):
        leave_pids_cgroup(spec["cgroup"])
    if status is None and not timed_out:
        status = 0
    report = {"layers": layers, "missing": missing, "timed_out": timed_out, "strays": max(0, strays - timed_out),
              "exit": os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None,
              "signal": os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None}
    os.write(report_fd, (json.dumps(report) + "\n").encode())
    os._exit(0)


if __name__ == "__main__":
    main()
