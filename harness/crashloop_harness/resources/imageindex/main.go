// imageindex writes an OCI image layout holding one image index: for each
// platform given, an image run as a non-root user, either of one static binary
// (the workload) or of layer tarballs (the harness: a rootfs, then its packages).
//
//	imageindex -out DIR -path /workload -user 65532:65532 \
//	    -binary linux/amd64=./workload-amd64 -binary linux/arm64=./workload-arm64
//	imageindex -out DIR -user 65532:65532 -entrypoint "python3 -m pkg" -env K=V \
//	    -layers linux/amd64=rootfs-amd64.tar,site-amd64.tar -layers linux/arm64=...
//
// Built on go-containerregistry, so the layout is what registries and their
// clients (skopeo, crane, oras) read: nothing of the format is written here.
// Every timestamp is zero, so the same binaries give the same digests.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// run says how each image runs: its entrypoint, user and environment.
type run struct {
	entrypoint []string
	user       string
	env        []string
}

func main() {
	var bins, layerSets, env repeated
	out := flag.String("out", "", "directory to write the OCI layout to (must not exist)")
	path := flag.String("path", "/workload", "where the binary lives in each image, its entrypoint")
	user := flag.String("user", "65532:65532", "the user each image runs as")
	entrypoint := flag.String("entrypoint", "", "the entrypoint, words split at spaces (default: -path)")
	flag.Var(&bins, "binary", "OS/ARCH=FILE: a static binary for that platform (repeatable)")
	flag.Var(&layerSets, "layers", "OS/ARCH=TAR[,TAR...]: that platform's layers, lowest first (repeatable)")
	flag.Var(&env, "env", "KEY=VALUE in each image's environment (repeatable)")
	flag.Parse()
	if *out == "" || (len(bins) == 0) == (len(layerSets) == 0) {
		fmt.Fprintln(os.Stderr, "imageindex: -out and either -binary or -layers (not both) are needed")
		os.Exit(2)
	}
	how := run{entrypoint: []string{*path}, user: *user, env: env}
	if *entrypoint != "" {
		how.entrypoint = strings.Fields(*entrypoint)
	}
	specs, makeImage := []string(bins), func(osName, arch, files string) (v1.Image, error) {
		return imageOf(files, *path, how, osName, arch)
	}
	if len(layerSets) > 0 {
		specs, makeImage = layerSets, func(osName, arch, files string) (v1.Image, error) {
			return imageOfLayers(strings.Split(files, ","), how, osName, arch)
		}
	}
	if err := write(*out, specs, makeImage); err != nil {
		fmt.Fprintln(os.Stderr, "imageindex:", err)
		os.Exit(1)
	}
}

func write(out string, specs []string, makeImage func(osName, arch, files string) (v1.Image, error)) error {
	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, spec := range specs {
		platform, files, ok := strings.Cut(spec, "=")
		osName, arch, okPlatform := strings.Cut(platform, "/")
		if !ok || !okPlatform || files == "" {
			return fmt.Errorf("%q: want OS/ARCH=FILE", spec)
		}
		image, err := makeImage(osName, arch, files)
		if err != nil {
			return fmt.Errorf("%s: %w", platform, err)
		}
		index = mutate.AppendManifests(index, mutate.IndexAddendum{
			Add: image,
			Descriptor: v1.Descriptor{
				MediaType: types.OCIManifestSchema1,
				Platform:  &v1.Platform{OS: osName, Architecture: arch},
			},
		})
	}
	_, err := layout.Write(out, index)
	return err
}

func imageOf(file, path string, how run, osName, arch string) (v1.Image, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	layerTar, err := tarOf(strings.TrimPrefix(path, "/"), data)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerTar)), nil },
		tarball.WithMediaType(types.OCILayer),
	)
	if err != nil {
		return nil, err
	}
	return imageFrom([]v1.Layer{layer}, how, osName, arch)
}

// imageOfLayers is an image of layer tarballs as they are, lowest first.
func imageOfLayers(files []string, how run, osName, arch string) (v1.Image, error) {
	var layers []v1.Layer
	for _, file := range files {
		layer, err := tarball.LayerFromFile(file, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		layers = append(layers, layer)
	}
	return imageFrom(layers, how, osName, arch)
}

func imageFrom(layers []v1.Layer, how run, osName, arch string) (v1.Image, error) {
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	image, err := mutate.AppendLayers(base, layers...)
	if err != nil {
		return nil, err
	}
	config, err := image.ConfigFile()
	if err != nil {
		return nil, err
	}
	config = config.DeepCopy()
	config.OS, config.Architecture = osName, arch
	config.Config.Entrypoint = how.entrypoint
	config.Config.User = how.user
	config.Config.Env = how.env
	return mutate.ConfigFile(image, config)
}

// tarOf is a layer of one executable file, owned by root, with zero times.
func tarOf(name string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	header := &tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := w.WriteHeader(header); err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
