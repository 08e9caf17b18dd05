package b

func Leaf() {}
func Cut()  {}
