"""The runtimes catalogue (``GET /v1/functions/runtimes``) and the specifications (CPU, memory).

Each runtime has a recipe directory here (``Containerfile``, the runtime server, ``build.sh``)
built into a local image by :mod:`apps.functions.images` from Debian packages. The keys are
Appwrite's (``python-3.13``, ``node-20.0``): Debian trixie ships Python 3.13 and Node.js 20.
"""

from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))

# key -> (name, version, recipe dir, default entrypoint, logo file name)
RUNTIMES: dict[str, dict] = {
    "python-3.13": {"name": "Python", "version": "3.13", "recipe": "python", "entrypoint": "main.py",
                    "logo": "python.png"},
    "node-20.0": {"name": "Node.js", "version": "20.0", "recipe": "node", "entrypoint": "index.js",
                  "logo": "node.png"},
}

# Appwrite's specification slugs: CPU cores and memory in MB. Execution limits come from here.
SPECIFICATIONS: dict[str, dict] = {
    "s-0.5vcpu-512mb": {"cpus": 0.5, "memory": 512},
    "s-1vcpu-512mb": {"cpus": 1, "memory": 512},
    "s-1vcpu-1gb": {"cpus": 1, "memory": 1024},
    "s-2vcpu-2gb": {"cpus": 2, "memory": 2048},
}
DEFAULT_SPECIFICATION = "s-1vcpu-512mb"


def recipe_dir(runtime: str) -> str:
    return os.path.join(HERE, RUNTIMES[runtime]["recipe"])


def runtime_model(key: str) -> dict:
    """The Appwrite ``Runtime`` JSON of ``key``; ``image`` is the local image's name."""
    from apps.functions.images import image_name

    r = RUNTIMES[key]
    return {"$id": key, "key": r["recipe"], "name": r["name"], "version": r["version"],
            "base": "localhost/debian:trixie-slim", "image": image_name(key), "logo": r["logo"],
            "supports": ["amd64", "arm64"]}


def specification_model(slug: str) -> dict:
    spec = SPECIFICATIONS[slug]
    return {"memory": spec["memory"], "cpus": spec["cpus"], "enabled": True, "slug": slug}
