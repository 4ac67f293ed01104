/* The baseline of ri-bench-startup: the least a C program costs to start and exit. */
int main(void) { return 0; }
