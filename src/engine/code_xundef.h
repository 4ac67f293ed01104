/* Undefines the X-macro parameters of RI_CODE_EVERY_OP (code.h), after a table is made
 * from it. No include guard: included after each expansion. */
#undef RI_X_CTRL
#undef RI_X_BR
#undef RI_X_CMPBR
#undef RI_X_FCMPBR
#undef RI_X_IMM
#undef RI_X_ADDR
#undef RI_X_ADDBR
#undef RI_X_I2ADDBR
#undef RI_X_MADDBR
#undef RI_X_PAIR
#undef RI_X_ADDL
#undef RI_X_LOADBR
#undef RI_X_STORE2
#undef RI_X_ACC
#undef RI_X_IPAIR
#undef RI_X_MEM
#undef RI_X_NUM
