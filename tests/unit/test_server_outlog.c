/*
 * The server's output log (src/server/outlog.c) without sockets: output events of at most
 * 1,024 bytes of data that never split a character, offsets that count what was
 * delivered, the bound on what is kept while nobody reads (the oldest dropped, one
 * notice in their place), and the output budget brought back to zero.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_internal.h"

typedef struct fixture {
    srv s;
    srv_sandbox sb;
} fixture;

static fixture *fixture_new(void) {
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    atomic_init(&f->s.out_bytes, 0);
    atomic_init(&f->sb.out_bytes, 0);
    f->sb.s = &f->s;
    return f;
}

/* What srv_post_output and srv_drain do with one write's output. */
static void post(fixture *f, int fd, const char *text, size_t len) {
    char *copy = malloc(len + 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    copy[len] = 0;
    atomic_fetch_add(&f->sb.out_bytes, len);
    atomic_fetch_add(&f->s.out_bytes, len);
    srv_outlog_append(&f->sb, fd, copy, len);
}

/* Takes every event off the log as the writable callback does; returns the data joined
 * (malloc'd) and checks each event's size and stream. */
static char *take_all(fixture *f, const char *stream, size_t *events) {
    size_t cap = 1 << 16, n = 0;
    char *all = malloc(cap);
    assert_non_null(all);
    *events = 0;
    while (f->sb.out_head) {
        size_t take;
        uint64_t before = f->sb.out_delivered;
        bool notice = f->sb.out_head->notice; /* ours: not in the offsets */
        char *ev = srv_outlog_event(&f->sb, &take);
        assert_non_null(ev);
        json_t *j = json_loads(ev, 0, NULL);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "event")), stream);
        const char *data = json_string_value(json_object_get(j, "data"));
        size_t len = json_string_length(json_object_get(j, "data"));
        assert_true(len > 0 && len <= SRV_OUT_EVENT_MAX);
        assert_int_equal(len, take);
        while (n + len + 1 > cap) {
            cap *= 2;
            all = realloc(all, cap);
            assert_non_null(all);
        }
        memcpy(all + n, data, len);
        n += len;
        json_decref(j);
        free(ev);
        srv_outlog_delivered(&f->sb, take);
        assert_int_equal(f->sb.out_delivered, before + (notice ? 0 : take));
        (*events)++;
    }
    all[n] = 0;
    return all;
}

static void events_never_split_a_character(void **state) {
    (void)state;
    fixture *f = fixture_new();
    /* "a€😀é": 10 bytes, so a cut every 1,024 bytes would fall inside characters */
    const char *unit = "a\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9";
    size_t n = 10 * 1000;
    char *text = malloc(n + 1);
    assert_non_null(text);
    for (size_t i = 0; i < n; i += 10) memcpy(text + i, unit, 10);
    text[n] = 0;
    post(f, 1, text, n);
    assert_int_equal(f->sb.out_posted, n);
    size_t events;
    char *got = take_all(f, "stdout", &events); /* each event parses: valid UTF-8 */
    assert_string_equal(got, text);
    assert_true(events >= n / SRV_OUT_EVENT_MAX && events <= n / SRV_OUT_EVENT_MAX + 2);
    assert_int_equal(f->sb.out_delivered, n);
    assert_int_equal(atomic_load(&f->sb.out_bytes), 0);
    assert_int_equal(atomic_load(&f->s.out_bytes), 0);
    assert_int_equal(f->sb.out_kept, 0);
    free(got);
    free(text);
    free(f);
}

static void kept_output_is_bounded_with_one_notice(void **state) {
    (void)state;
    fixture *f = fixture_new();
    size_t n = SRV_OUT_KEEP_MAX + (1u << 20) + 1; /* no client attached: the bound applies */
    char *text = malloc(n);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++) text[i] = (char)('a' + i % 26);
    post(f, 2, text, n / 2);
    post(f, 2, text + n / 2, n - n / 2);
    assert_true(f->sb.out_kept <= SRV_OUT_KEEP_MAX);
    assert_int_equal(f->sb.out_dropped + f->sb.out_kept, n);
    assert_int_equal(f->sb.out_delivered, f->sb.out_dropped);
    /* output nobody reads and no execution runs for is outside the server's budget */
    assert_int_equal(atomic_load(&f->s.out_bytes), 0);
    assert_int_equal(atomic_load(&f->sb.out_bytes), f->sb.out_kept);
    assert_true(f->sb.out_head->notice);
    size_t events;
    char *got = take_all(f, "stderr", &events);
    char notice[160];
    snprintf(notice, sizeof notice, "[ri serve: %llu bytes of output dropped here: no client read them in time]\n",
             (unsigned long long)f->sb.out_dropped);
    assert_memory_equal(got, notice, strlen(notice));
    /* then the newest bytes, exactly */
    assert_int_equal(strlen(got) - strlen(notice), f->sb.out_posted - f->sb.out_dropped);
    assert_memory_equal(got + strlen(notice), text + f->sb.out_dropped, n - f->sb.out_dropped);
    assert_int_equal(atomic_load(&f->sb.out_bytes), 0);
    free(got);
    free(text);
    free(f);
}

static void clear_gives_everything_back(void **state) {
    (void)state;
    fixture *f = fixture_new();
    f->sb.out_head = NULL;
    post(f, 1, "hello", 5);
    post(f, 2, "world", 5);
    size_t take;
    char *ev = srv_outlog_event(&f->sb, &take);
    assert_string_equal(ev, "{\"event\":\"stdout\",\"data\":\"hello\"}");
    free(ev);
    srv_outlog_delivered(&f->sb, 2); /* part of an event: a socket wrote "he" */
    assert_int_equal(f->sb.out_delivered, 2);
    f->sb.done_event = strdup("{}");
    srv_outlog_clear(&f->sb);
    assert_null(f->sb.out_head);
    assert_null(f->sb.done_event);
    assert_int_equal(f->sb.out_delivered, f->sb.out_posted);
    assert_int_equal(atomic_load(&f->sb.out_bytes), 0);
    assert_int_equal(atomic_load(&f->s.out_bytes), 0);
    assert_int_equal(f->sb.out_kept, 0);
    free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(events_never_split_a_character),
        cmocka_unit_test(kept_output_is_bounded_with_one_notice),
        cmocka_unit_test(clear_gives_everything_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
