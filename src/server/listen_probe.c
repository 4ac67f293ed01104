/* Why the server cannot listen: libwebsockets reports only that the listening socket failed,
 * so before creating it the address is tried here, the same way (SO_REUSEADDR, bind,
 * listen), to name the cause: an address in use, a host that does not resolve or is not
 * this machine's, a port that needs privileges. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/server_internal.h"

bool srv_probe_listen(const char *host, int port, char *why, size_t cap) {
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        snprintf(why, cap, "the host '%s' does not resolve: %s", host ? host : "", gai_strerror(rc));
        return false;
    }
    int saved = 0;
    bool ok = false;
    for (struct addrinfo *ai = res; ai && !ok; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1) == 0) ok = true;
        else saved = errno;
        close(fd);
    }
    freeaddrinfo(res);
    if (!ok) snprintf(why, cap, "%s", strerror(saved ? saved : EADDRNOTAVAIL));
    return ok;
}
