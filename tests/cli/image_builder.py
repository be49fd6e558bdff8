"""Container images built in Python for the --image tests (issue 48): layers as tar files (tarfile),
an OCI image layout directory (oci-layout, index.json, blobs/sha256) and a `docker save` archive
(manifest.json, as Docker 25+ writes it: blobs under blobs/sha256, plus index.json), .tar or .tar.gz.
No buildah or registry needed; the layouts follow opencontainers/image-spec (image-layout.md,
manifest.md, layer.md, config.md) and moby's image/tarexport."""

import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Member:
    name: str
    kind: str = "file"  # file | dir | symlink | hardlink | raw (a prebuilt header, for hostile tars)
    data: bytes = b""
    target: str = ""
    mode: int = 0o644
    pax: dict = field(default_factory=dict)


def file(name, data=b"", mode=0o644):
    return Member(name, "file", data if isinstance(data, bytes) else data.encode(), mode=mode)


def symlink(name, target):
    return Member(name, "symlink", target=target)


def hardlink(name, target):
    return Member(name, "hardlink", target=target)


def directory(name):
    return Member(name, "dir", mode=0o755)


def layer_tar(members) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member in members:
            info = tarfile.TarInfo(member.name)
            info.mode = member.mode
            info.pax_headers = dict(member.pax)
            if member.kind == "file":
                info.size = len(member.data)
                tar.addfile(info, io.BytesIO(member.data))
                continue
            if member.kind == "dir":
                info.type = tarfile.DIRTYPE
            elif member.kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = member.target
            elif member.kind == "hardlink":
                info.type = tarfile.LNKTYPE
                info.linkname = member.target
            tar.addfile(info)
    return out.getvalue()


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class Image:
    layers: list  # each a list of Members, or raw tar bytes
    env: list = field(default_factory=lambda: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
    labels: dict = field(default_factory=dict)
    gzip_layers: bool = True
    user: str = ""
    working_dir: str = ""

    def blobs(self):
        """(config bytes, [(layer blob bytes, media type)])."""
        layers = []
        diff_ids = []
        for layer in self.layers:
            raw = layer if isinstance(layer, bytes) else layer_tar(layer)
            diff_ids.append(digest(raw))
            if self.gzip_layers:
                layers.append((gzip.compress(raw, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip"))
            else:
                layers.append((raw, "application/vnd.oci.image.layer.v1.tar"))
        config = {
            "architecture": "amd64" if __import__("os").uname().machine != "aarch64" else "arm64",
            "os": "linux",
            "config": {"Env": self.env, "Cmd": ["python3"], "WorkingDir": self.working_dir, "User": self.user,
                       "Labels": self.labels},
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        }
        return json.dumps(config).encode(), layers

    def oci_files(self) -> dict:
        """path in the layout -> bytes."""
        config, layers = self.blobs()
        files = {"oci-layout": json.dumps({"imageLayoutVersion": "1.0.0"}).encode()}
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest(config),
                       "size": len(config)},
            "layers": [{"mediaType": media, "digest": digest(blob), "size": len(blob)} for blob, media in layers],
        }
        manifest_bytes = json.dumps(manifest).encode()
        for blob in [config, manifest_bytes, *[blob for blob, _ in layers]]:
            files["blobs/sha256/" + digest(blob).split(":")[1]] = blob
        files["index.json"] = json.dumps({
            "schemaVersion": 2,
            "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest(manifest_bytes),
                           "size": len(manifest_bytes), "annotations": {"org.opencontainers.image.ref.name": "test"}}],
        }).encode()
        return files

    def write_oci_layout(self, path: Path) -> Path:
        for name, data in self.oci_files().items():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_bytes(data)
        return path

    def write_docker_archive(self, path: Path, compress: bool = False) -> Path:
        """docker save (Docker 25+): the OCI layout plus manifest.json naming the blobs."""
        files = self.oci_files()
        config, layers = self.blobs()
        files["manifest.json"] = json.dumps([{
            "Config": "blobs/sha256/" + digest(config).split(":")[1],
            "RepoTags": ["test:latest"],
            "Layers": ["blobs/sha256/" + digest(blob).split(":")[1] for blob, _ in layers],
        }]).encode()
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        data = out.getvalue()
        path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
        return path


def nostdlib_library(directory: Path, soname: str) -> Path | None:
    """`directory/soname`, a shared object with that SONAME that needs nothing (-nostdlib): a root
    without a libc then has complete closures. None when no C compiler builds one."""
    import os
    import shutil
    import subprocess

    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f".{soname}.c"
    source.write_text("int cudadiag_test_placeholder(void) { return 0; }\n")
    output = directory / soname
    try:
        for compiler in [c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)]:
            done = subprocess.run([compiler, "-shared", "-fPIC", "-nostdlib", f"-Wl,-soname,{soname}", "-o",
                                   str(output), str(source)], capture_output=True, timeout=60, check=False)
            if done.returncode == 0:
                return output
    finally:
        source.unlink(missing_ok=True)
    return None
