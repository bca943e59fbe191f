module crashloop.local/runc-capwrap

go 1.22
