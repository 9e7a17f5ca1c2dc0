#include <liburing.h>
int main(void)
{
	struct io_uring r;
	return io_uring_queue_init(1, &r, 0);
}
