module crashloop.local/pause

go 1.22
