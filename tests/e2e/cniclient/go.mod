module cni-rdma-plugins/tests/e2e/cniclient

go 1.19

require github.com/containernetworking/cni v1.1.2

replace github.com/containernetworking/cni => /usr/share/gocode/src/github.com/containernetworking/cni
