module example.com/wc

go 1.22
