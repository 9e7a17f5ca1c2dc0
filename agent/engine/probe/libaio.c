#include <libaio.h>
int main(void)
{
	io_context_t c = 0;
	return io_setup(1, &c);
}
