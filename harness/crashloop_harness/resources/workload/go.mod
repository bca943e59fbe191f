module crashloop.local/workload

go 1.22
