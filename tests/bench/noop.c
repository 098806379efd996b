/* A plugin that does nothing: its figures are the cost of being exec'd at all */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	const char *cmd = getenv("CNI_COMMAND");
	char buf[4096];

	/* A runtime writes the whole config; read it as a plugin would. */
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	if (cmd && strcmp(cmd, "ADD") == 0)
		fputs("{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"noop\"}]}\n", stdout);
	return 0;
}
