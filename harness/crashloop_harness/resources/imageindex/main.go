// imageindex writes an OCI image layout holding one image index: for each
// platform given, an image of one static binary, run as a non-root user.
//
//	imageindex -out DIR -path /workload -user 65532:65532 \
//	    -binary linux/amd64=./workload-amd64 -binary linux/arm64=./workload-arm64
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

type binaries []string

func (b *binaries) String() string     { return strings.Join(*b, ",") }
func (b *binaries) Set(v string) error { *b = append(*b, v); return nil }

func main() {
	var bins binaries
	out := flag.String("out", "", "directory to write the OCI layout to (must not exist)")
	path := flag.String("path", "/workload", "where the binary lives in each image, its entrypoint")
	user := flag.String("user", "65532:65532", "the user each image runs as")
	flag.Var(&bins, "binary", "OS/ARCH=FILE: a static binary for that platform (repeatable)")
	flag.Parse()
	if *out == "" || len(bins) == 0 {
		fmt.Fprintln(os.Stderr, "imageindex: -out and at least one -binary are needed")
		os.Exit(2)
	}
	if err := write(*out, *path, *user, bins); err != nil {
		fmt.Fprintln(os.Stderr, "imageindex:", err)
		os.Exit(1)
	}
}

func write(out, path, user string, bins []string) error {
	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, spec := range bins {
		platform, file, ok := strings.Cut(spec, "=")
		osName, arch, okPlatform := strings.Cut(platform, "/")
		if !ok || !okPlatform || file == "" {
			return fmt.Errorf("-binary %q: want OS/ARCH=FILE", spec)
		}
		image, err := imageOf(file, path, user, osName, arch)
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

func imageOf(file, path, user, osName, arch string) (v1.Image, error) {
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
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	image, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	config, err := image.ConfigFile()
	if err != nil {
		return nil, err
	}
	config = config.DeepCopy()
	config.OS, config.Architecture = osName, arch
	config.Config.Entrypoint = []string{path}
	config.Config.User = user
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
