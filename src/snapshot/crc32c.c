/*
 * CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial value and final xor
 * 0xFFFFFFFF), the image checksum in CSUM. On x86-64 with SSE4.2 (checked at run time)
 * and on AArch64 with the CRC extension it runs on the CPU's crc32c instruction, about
 * as fast as memory can be read; elsewhere a byte-wise table. The table is a constant:
 * nothing here is mutable state.
 */
#include <string.h>

#include "snapshot_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define SNAP_CRC_X86 1
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc 2.33+: the features the dynamic loader already read */
#define SNAP_CPU_FROM_LIBC 1
#endif
#endif
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define SNAP_CRC_ARM 1
#endif

static const uint32_t crc_table[256] = {
    0x00000000u, 0xF26B8303u, 0xE13B70F7u, 0x1350F3F4u, 0xC79A971Fu, 0x35F1141Cu,
    0x26A1E7E8u, 0xD4CA64EBu, 0x8AD958CFu, 0x78B2DBCCu, 0x6BE22838u, 0x9989AB3Bu,
    0x4D43CFD0u, 0xBF284CD3u, 0xAC78BF27u, 0x5E133C24u, 0x105EC76Fu, 0xE235446Cu,
    0xF165B798u, 0x030E349Bu, 0xD7C45070u, 0x25AFD373u, 0x36FF2087u, 0xC494A384u,
    0x9A879FA0u, 0x68EC1CA3u, 0x7BBCEF57u, 0x89D76C54u, 0x5D1D08BFu, 0xAF768BBCu,
    0xBC267848u, 0x4E4DFB4Bu, 0x20BD8EDEu, 0xD2D60DDDu, 0xC186FE29u, 0x33ED7D2Au,
    0xE72719C1u, 0x154C9AC2u, 0x061C6936u, 0xF477EA35u, 0xAA64D611u, 0x580F5512u,
    0x4B5FA6E6u, 0xB93425E5u, 0x6DFE410Eu, 0x9F95C20Du, 0x8CC531F9u, 0x7EAEB2FAu,
    0x30E349B1u, 0xC288CAB2u, 0xD1D83946u, 0x23B3BA45u, 0xF779DEAEu, 0x05125DADu,
    0x1642AE59u, 0xE4292D5Au, 0xBA3A117Eu, 0x4851927Du, 0x5B016189u, 0xA96AE28Au,
    0x7DA08661u, 0x8FCB0562u, 0x9C9BF696u, 0x6EF07595u, 0x417B1DBCu, 0xB3109EBFu,
    0xA0406D4Bu, 0x522BEE48u, 0x86E18AA3u, 0x748A09A0u, 0x67DAFA54u, 0x95B17957u,
    0xCBA24573u, 0x39C9C670u, 0x2A993584u, 0xD8F2B687u, 0x0C38D26Cu, 0xFE53516Fu,
    0xED03A29Bu, 0x1F682198u, 0x5125DAD3u, 0xA34E59D0u, 0xB01EAA24u, 0x42752927u,
    0x96BF4DCCu, 0x64D4CECFu, 0x77843D3Bu, 0x85EFBE38u, 0xDBFC821Cu, 0x2997011Fu,
    0x3AC7F2EBu, 0xC8AC71E8u, 0x1C661503u, 0xEE0D9600u, 0xFD5D65F4u, 0x0F36E6F7u,
    0x61C69362u, 0x93AD1061u, 0x80FDE395u, 0x72966096u, 0xA65C047Du, 0x5437877Eu,
    0x4767748Au, 0xB50CF789u, 0xEB1FCBADu, 0x197448AEu, 0x0A24BB5Au, 0xF84F3859u,
    0x2C855CB2u, 0xDEEEDFB1u, 0xCDBE2C45u, 0x3FD5AF46u, 0x7198540Du, 0x83F3D70Eu,
    0x90A324FAu, 0x62C8A7F9u, 0xB602C312u, 0x44694011u, 0x5739B3E5u, 0xA55230E6u,
    0xFB410CC2u, 0x092A8FC1u, 0x1A7A7C35u, 0xE811FF36u, 0x3CDB9BDDu, 0xCEB018DEu,
    0xDDE0EB2Au, 0x2F8B6829u, 0x82F63B78u, 0x709DB87Bu, 0x63CD4B8Fu, 0x91A6C88Cu,
    0x456CAC67u, 0xB7072F64u, 0xA457DC90u, 0x563C5F93u, 0x082F63B7u, 0xFA44E0B4u,
    0xE9141340u, 0x1B7F9043u, 0xCFB5F4A8u, 0x3DDE77ABu, 0x2E8E845Fu, 0xDCE5075Cu,
    0x92A8FC17u, 0x60C37F14u, 0x73938CE0u, 0x81F80FE3u, 0x55326B08u, 0xA759E80Bu,
    0xB4091BFFu, 0x466298FCu, 0x1871A4D8u, 0xEA1A27DBu, 0xF94AD42Fu, 0x0B21572Cu,
    0xDFEB33C7u, 0x2D80B0C4u, 0x3ED04330u, 0xCCBBC033u, 0xA24BB5A6u, 0x502036A5u,
    0x4370C551u, 0xB11B4652u, 0x65D122B9u, 0x97BAA1BAu, 0x84EA524Eu, 0x7681D14Du,
    0x2892ED69u, 0xDAF96E6Au, 0xC9A99D9Eu, 0x3BC21E9Du, 0xEF087A76u, 0x1D63F975u,
    0x0E330A81u, 0xFC588982u, 0xB21572C9u, 0x407EF1CAu, 0x532E023Eu, 0xA145813Du,
    0x758FE5D6u, 0x87E466D5u, 0x94B49521u, 0x66DF1622u, 0x38CC2A06u, 0xCAA7A905u,
    0xD9F75AF1u, 0x2B9CD9F2u, 0xFF56BD19u, 0x0D3D3E1Au, 0x1E6DCDEEu, 0xEC064EEDu,
    0xC38D26C4u, 0x31E6A5C7u, 0x22B65633u, 0xD0DDD530u, 0x0417B1DBu, 0xF67C32D8u,
    0xE52CC12Cu, 0x1747422Fu, 0x49547E0Bu, 0xBB3FFD08u, 0xA86F0EFCu, 0x5A048DFFu,
    0x8ECEE914u, 0x7CA56A17u, 0x6FF599E3u, 0x9D9E1AE0u, 0xD3D3E1ABu, 0x21B862A8u,
    0x32E8915Cu, 0xC083125Fu, 0x144976B4u, 0xE622F5B7u, 0xF5720643u, 0x07198540u,
    0x590AB964u, 0xAB613A67u, 0xB831C993u, 0x4A5A4A90u, 0x9E902E7Bu, 0x6CFBAD78u,
    0x7FAB5E8Cu, 0x8DC0DD8Fu, 0xE330A81Au, 0x115B2B19u, 0x020BD8EDu, 0xF0605BEEu,
    0x24AA3F05u, 0xD6C1BC06u, 0xC5914FF2u, 0x37FACCF1u, 0x69E9F0D5u, 0x9B8273D6u,
    0x88D28022u, 0x7AB90321u, 0xAE7367CAu, 0x5C18E4C9u, 0x4F48173Du, 0xBD23943Eu,
    0xF36E6F75u, 0x0105EC76u, 0x12551F82u, 0xE03E9C81u, 0x34F4F86Au, 0xC69F7B69u,
    0xD5CF889Du, 0x27A40B9Eu, 0x79B737BAu, 0x8BDCB4B9u, 0x988C474Du, 0x6AE7C44Eu,
    0xBE2DA0A5u, 0x4C4623A6u, 0x5F16D052u, 0xAD7D5351u,
};

static uint32_t crc_bytes(uint32_t c, const uint8_t *p, size_t n) {
    while (n--) c = crc_table[(c ^ *p++) & 0xFFu] ^ (c >> 8);
    return c;
}

/* Three streams at once: the CRC instruction takes 3 cycles but can start every cycle, so
 * three independent blocks run about three times as fast as one chain. The blocks' CRCs
 * are joined by linearity: crc(c, A || B) = shift(crc(c, A), |B|) ^ crc(0, B), where shift
 * advances a register over |B| zero bytes. SHIFT_BLOCK[i] is shift(1 << i, BLOCK), computed
 * offline (bit by bit, reflected polynomial 0x82F63B78), so there is no table to build. */
#if defined(SNAP_CRC_X86) || defined(SNAP_CRC_ARM)
#define BLOCK 8192u
static const uint32_t SHIFT_BLOCK[32] = {
    0xE040E0ACu, 0xC56DB7A9u, 0x8F3719A3u, 0x1B8245B7u, 0x37048B6Eu, 0x6E0916DCu,
    0xDC122DB8u, 0xBDC82D81u, 0x7E7C2DF3u, 0xFCF85BE6u, 0xFC1CC13Du, 0xFDD5F48Bu,
    0xFE479FE7u, 0xF963493Fu, 0xF72AE48Fu, 0xEBB9BFEFu, 0xD29F092Fu, 0xA0D264AFu,
    0x4448BFAFu, 0x88917F5Eu, 0x14CE884Du, 0x299D109Au, 0x533A2134u, 0xA6744268u,
    0x4904F221u, 0x9209E442u, 0x21FFBE75u, 0x43FF7CEAu, 0x87FEF9D4u, 0x0A118559u,
    0x14230AB2u, 0x28461564u,
};

static uint32_t shift_block(uint32_t c) {
    uint32_t r = 0;
    for (unsigned i = 0; i < 32; i++)
        if ((c >> i) & 1u) r ^= SHIFT_BLOCK[i];
    return r;
}
#endif

#if defined(SNAP_CRC_X86)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t n) {
    for (; n >= 3 * BLOCK; p += 3 * BLOCK, n -= 3 * BLOCK) {
        uint64_t c0 = c, c1 = 0, c2 = 0;
        for (size_t k = 0; k < BLOCK; k += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + k, 8);
            memcpy(&w1, p + BLOCK + k, 8);
            memcpy(&w2, p + 2 * BLOCK + k, 8);
            c0 = _mm_crc32_u64(c0, w0);
            c1 = _mm_crc32_u64(c1, w1);
            c2 = _mm_crc32_u64(c2, w2);
        }
        c = shift_block(shift_block((uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
    }
    uint64_t c64 = c;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8); /* no alignment assumed */
        c64 = _mm_crc32_u64(c64, w);
    }
    c = (uint32_t)c64;
    for (; n; n--) c = _mm_crc32_u8(c, *p++);
    return c;
}
#elif defined(SNAP_CRC_ARM)
static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t n) {
    for (; n >= 3 * BLOCK; p += 3 * BLOCK, n -= 3 * BLOCK) {
        uint32_t c0 = c, c1 = 0, c2 = 0;
        for (size_t k = 0; k < BLOCK; k += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + k, 8);
            memcpy(&w1, p + BLOCK + k, 8);
            memcpy(&w2, p + 2 * BLOCK + k, 8);
            c0 = __crc32cd(c0, w0);
            c1 = __crc32cd(c1, w1);
            c2 = __crc32cd(c2, w2);
        }
        c = shift_block(shift_block(c0) ^ c1) ^ c2;
    }
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __crc32cd(c, w);
    }
    for (; n; n--) c = __crc32cb(c, *p++);
    return c;
}
#endif

#if defined(SNAP_CRC_X86)
/* glibc's copy of the CPU's features where there is one: __builtin_cpu_supports links
 * libgcc's constructor, which asks the CPU again (cpuid) in every process at start-up,
 * about 60 us on a virtual machine, where each cpuid traps to the hypervisor. */
bool snap_cpu_has_sse42(void) {
#if defined(SNAP_CPU_FROM_LIBC)
    return CPU_FEATURE_ACTIVE(SSE4_2);
#else
    return __builtin_cpu_supports("sse4.2");
#endif
}
#endif

uint32_t snap_crc32c_update(uint32_t reg, const uint8_t *data, size_t len) {
    if (!len) return reg;
#if defined(SNAP_CRC_X86)
    if (snap_cpu_has_sse42()) return crc_hw(reg, data, len);
#elif defined(SNAP_CRC_ARM)
    return crc_hw(reg, data, len);
#endif
    return crc_bytes(reg, data, len);
}

uint32_t ri_snap_crc32c(const uint8_t *data, size_t len) {
    if (!data) return 0;
    return snap_crc32c_update(0xFFFFFFFFu, data, len) ^ 0xFFFFFFFFu;
}

/* a * b modulo the polynomial, both reflected (bit 31 is x^0). */
static uint32_t mul_mod(uint32_t a, uint32_t b) {
    uint32_t r = 0;
    for (uint32_t m = 1u << 31; m; m >>= 1) {
        if (a & m) r ^= b;
        b = b & 1u ? (b >> 1) ^ 0x82F63B78u : b >> 1;
    }
    return r;
}

/* Feeding n zero bytes multiplies the register by x^(8n): square and multiply. */
uint32_t snap_crc32c_shift(uint32_t reg, uint64_t n) {
    uint32_t power = 1u << 31, base = 1u << 23; /* x^0, x^8 */
    for (; n; n >>= 1) {
        if (n & 1u) power = mul_mod(power, base);
        base = mul_mod(base, base);
    }
    return mul_mod(power, reg);
}
