module domino-arena/examples/go

go 1.19
