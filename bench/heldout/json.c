/* Held-out: a JSON tokenizer: generates a document of objects, arrays, strings with escapes,
 * numbers, true/false/null, then scans it into tokens, parsing numbers and checking nesting. */
#include "bench.h" /* ../shared/bench/src/bench.h */
#define CAP (1u << 18)
static u8 doc[CAP];
static u32 len;
static u32 rnd;
static u32 next(void) { rnd = rnd * 1103515245u + 12345u; return rnd >> 8; }
static void put(const char *s) { while (*s && len < CAP) doc[len++] = (u8)*s++; }
static void put_num(u32 v) {
  char buf[12]; int n = 0;
  do { buf[n++] = (char)('0' + v % 10u); v /= 10u; } while (v);
  while (n && len < CAP) doc[len++] = (u8)buf[--n];
}
static void gen_value(int depth) {
  u32 k = next() % (depth > 4 ? 5u : 7u);
  switch (k) {
  case 0: put_num(next() % 100000u); if (next() & 1u) { put("."); put_num(next() % 1000u); } break;
  case 1: put("\"name_"); put_num(next() % 977u); if (next() % 3u == 0) put("\\n\\\"q\\\""); put("\""); break;
  case 2: put(next() & 1u ? "true" : "false"); break;
  case 3: put("null"); break;
  case 4: put("-"); put_num(next() % 5000u); put("e"); put_num(next() % 9u); break;
  case 5: {
    u32 n = next() % 6u;
    put("[");
    for (u32 i = 0; i < n; i++) { if (i) put(", "); gen_value(depth + 1); }
    put("]");
    break;
  }
  default: {
    u32 n = next() % 6u;
    put("{");
    for (u32 i = 0; i < n; i++) { if (i) put(",\n "); put("\"key"); put_num(i); put("\": "); gen_value(depth + 1); }
    put("}");
  }
  }
}
enum { T_OBJ, T_END_OBJ, T_ARR, T_END_ARR, T_STR, T_NUM, T_TRUE, T_FALSE, T_NULL, T_COLON, T_COMMA };
static u32 tokenize(u32 *sum) {
  u32 pos = 0, tokens = 0, depth = 0, maxdepth = 0;
  u8 stack[256];
  while (pos < len) {
    u8 c = doc[pos];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') { pos++; continue; }
    u32 kind;
    if (c == '{' || c == '[') {
      if (depth == sizeof stack) return 0;
      stack[depth++] = c; kind = c == '{' ? T_OBJ : T_ARR; pos++;
      if (depth > maxdepth) maxdepth = depth;
    } else if (c == '}' || c == ']') {
      if (!depth || stack[depth - 1] != (c == '}' ? '{' : '[')) return 0;
      depth--; kind = c == '}' ? T_END_OBJ : T_END_ARR; pos++;
    } else if (c == '"') {
      u32 h = 5381u;
      pos++;
      while (pos < len && doc[pos] != '"') {
        if (doc[pos] == '\\') pos++;
        h = h * 33u + doc[pos++];
      }
      pos++; kind = T_STR; *sum += h;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      u32 neg = c == '-', v = 0, frac = 0, exp = 0;
      if (neg) pos++;
      while (pos < len && doc[pos] >= '0' && doc[pos] <= '9') v = v * 10u + (u32)(doc[pos++] - '0');
      if (pos < len && doc[pos] == '.') { pos++; while (pos < len && doc[pos] >= '0' && doc[pos] <= '9') frac = frac * 10u + (u32)(doc[pos++] - '0'); }
      if (pos < len && (doc[pos] == 'e' || doc[pos] == 'E')) { pos++; while (pos < len && doc[pos] >= '0' && doc[pos] <= '9') exp = exp * 10u + (u32)(doc[pos++] - '0'); }
      kind = T_NUM; *sum += (neg ? 0u - v : v) ^ (frac << 7) ^ (exp << 20);
    } else if (c == 't') { pos += 4; kind = T_TRUE; }
    else if (c == 'f') { pos += 5; kind = T_FALSE; }
    else if (c == 'n') { pos += 4; kind = T_NULL; }
    else if (c == ':') { pos++; kind = T_COLON; }
    else if (c == ',') { pos++; kind = T_COMMA; }
    else return 0;
    *sum = *sum * 31u + kind;
    tokens++;
  }
  return depth ? 0 : tokens + maxdepth;
}
EXPORT("run") u32 run(void) {
  u32 acc = 0;
  for (u32 round = 0; round < 4; round++) {
    rnd = round + 7u; len = 0;
    put("[");
    for (u32 i = 0; len + 4096 < CAP; i++) { if (i) put(",\n"); gen_value(0); }
    put("]");
    for (u32 rep = 0; rep < 12; rep++) {
      u32 sum = 0, t = tokenize(&sum);
      acc = acc * 16777619u ^ t ^ sum;
    }
  }
  return acc;
}
