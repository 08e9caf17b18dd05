// The module TestChain reads. It takes the path of the module enginepath
// measures, as the name matching knows no other.
module github.com/zkrecipes/recipes

go 1.25
