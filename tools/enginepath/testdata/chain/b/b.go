package b

func Leaf()    {}
func Cut()     {}
func Check()   {} // reached: the root's Retry calls it
func Written() {} // not reached: only the root's loop calls it
