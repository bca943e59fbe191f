// Command etcd starts the etcd server. The upstream main package lives in a
// module that cannot be built from the module proxy alone, so the node image
// builds this one: it hands the arguments to etcdmain, as upstream's does.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
