; The grad-norm reduction of a train step (the step's 127th launch), as tinygrad 0.14.0's AMD LLVM renderer wrote it for
; gfx950 (MI350X): captured with DEBUG=4 from `uopcheck train --config tiny --layers 1 --seq-len 16 --batch-size 4 --steps 2
; --device MOCK+AMD::gfx950`. Data, never executed by Python: conformance/amd_lds_probe.py compiles it for a mock AMD target and
; runs it over 12 buffers of ones (global 1, local 16). Every index it forms is a loop counter below its constant bound.
@local_0 = internal unnamed_addr addrspace(3) global [16 x float] undef, align 16
define amdgpu_kernel void @r_16_4_11008_11008_11008_4096_2048_2048_4096_64_64_16512_11(float* noalias align 32 %data0, float* noalias align 32 %data1, float* noalias align 32 %data2, float* noalias align 32 %data3, float* noalias align 32 %data4, float* noalias align 32 %data5, float* noalias align 32 %data6, float* noalias align 32 %data7, float* noalias align 32 %data8, float* noalias align 32 %data9, float* noalias align 32 %data10, float* noalias align 32 %data11) #0
{
  %reg_0 = alloca [1 x float]
  %reg_1 = alloca [1 x float]
  %reg_2 = alloca [1 x float]
  %reg_3 = alloca [1 x float]
  %reg_4 = alloca [1 x float]
  %reg_5 = alloca [1 x float]
  %reg_6 = alloca [1 x float]
  %reg_7 = alloca [1 x float]
  %reg_8 = alloca [1 x float]
  %reg_9 = alloca [1 x float]
  %reg_10 = alloca [1 x float]
  %reg_11 = alloca [1 x float]
  %reg_12 = alloca [1 x float]
  %local_0 = addrspacecast [16 x float] addrspace(3)* @local_0 to [16 x float]*
  %v0 = tail call i32 @llvm.amdgcn.workitem.id.x(); 
  %v1 = getelementptr inbounds float, float* %reg_0, i32 0
  %v2 = shl i32 %v0, 2
  store float 0.0, float* %v1
  br label %loop_entry_0
loop_entry_0:
  br label %loop_latch_0
loop_latch_0:
  %v4 = phi i32 [ 0, %loop_entry_0 ], [ %v4phi, %loop_footer_0 ]
  %v4phi = add i32 %v4, 1
  %v4cmp = icmp ult i32 %v4, 4
  br i1 %v4cmp, label %loop_body_0, label %loop_exit_0
loop_body_0:
  %v5 = add nsw i32 %v2, %v4
  %v6 = getelementptr inbounds float, float* %data1, i32 %v5
  %v7 = load float, float* %v6
  %v8 = getelementptr inbounds float, float* %reg_0, i32 0
  %v9 = load float, float* %v8
  %v10 = fmul nsz arcp contract afn float %v7, %v7
  %v11 = fadd nsz arcp contract afn float %v9, %v10
  store float %v11, float* %v8
  br label %loop_footer_0
loop_footer_0:
  br label %loop_latch_0
loop_exit_0:
  %v14 = getelementptr inbounds float, float* %reg_2, i32 0
  store float 0.0, float* %v14
  br label %loop_entry_1
loop_entry_1:
  br label %loop_latch_1
loop_latch_1:
  %v16 = phi i32 [ 0, %loop_entry_1 ], [ %v16phi, %loop_footer_1 ]
  %v16phi = add i32 %v16, 1
  %v16cmp = icmp ult i32 %v16, 11008
  br i1 %v16cmp, label %loop_body_1, label %loop_exit_1
loop_body_1:
  %v17 = getelementptr inbounds float, float* %data2, i32 %v16
  %v18 = load float, float* %v17
  %v19 = getelementptr inbounds float, float* %reg_2, i32 0
  %v20 = load float, float* %v19
  %v21 = fmul nsz arcp contract afn float %v18, %v18
  %v22 = fadd nsz arcp contract afn float %v20, %v21
  store float %v22, float* %v19
  br label %loop_footer_1
loop_footer_1:
  br label %loop_latch_1
loop_exit_1:
  %v25 = getelementptr inbounds float, float* %reg_3, i32 0
  store float 0.0, float* %v25
  br label %loop_entry_3
loop_entry_3:
  br label %loop_latch_3
loop_latch_3:
  %v27 = phi i32 [ 0, %loop_entry_3 ], [ %v27phi, %loop_footer_3 ]
  %v27phi = add i32 %v27, 1
  %v27cmp = icmp ult i32 %v27, 11008
  br i1 %v27cmp, label %loop_body_3, label %loop_exit_3
loop_body_3:
  %v28 = getelementptr inbounds float, float* %data3, i32 %v27
  %v29 = load float, float* %v28
  %v30 = getelementptr inbounds float, float* %reg_3, i32 0
  %v31 = load float, float* %v30
  %v32 = fmul nsz arcp contract afn float %v29, %v29
  %v33 = fadd nsz arcp contract afn float %v31, %v32
  store float %v33, float* %v30
  br label %loop_footer_3
loop_footer_3:
  br label %loop_latch_3
loop_exit_3:
  %v36 = getelementptr inbounds float, float* %reg_4, i32 0
  store float 0.0, float* %v36
  br label %loop_entry_5
loop_entry_5:
  br label %loop_latch_5
loop_latch_5:
  %v38 = phi i32 [ 0, %loop_entry_5 ], [ %v38phi, %loop_footer_5 ]
  %v38phi = add i32 %v38, 1
  %v38cmp = icmp ult i32 %v38, 11008
  br i1 %v38cmp, label %loop_body_5, label %loop_exit_5
loop_body_5:
  %v39 = getelementptr inbounds float, float* %data4, i32 %v38
  %v40 = load float, float* %v39
  %v41 = getelementptr inbounds float, float* %reg_4, i32 0
  %v42 = load float, float* %v41
  %v43 = fmul nsz arcp contract afn float %v40, %v40
  %v44 = fadd nsz arcp contract afn float %v42, %v43
  store float %v44, float* %v41
  br label %loop_footer_5
loop_footer_5:
  br label %loop_latch_5
loop_exit_5:
  %v47 = getelementptr inbounds float, float* %reg_5, i32 0
  store float 0.0, float* %v47
  br label %loop_entry_7
loop_entry_7:
  br label %loop_latch_7
loop_latch_7:
  %v49 = phi i32 [ 0, %loop_entry_7 ], [ %v49phi, %loop_footer_7 ]
  %v49phi = add i32 %v49, 1
  %v49cmp = icmp ult i32 %v49, 4096
  br i1 %v49cmp, label %loop_body_7, label %loop_exit_7
loop_body_7:
  %v50 = getelementptr inbounds float, float* %data5, i32 %v49
  %v51 = load float, float* %v50
  %v52 = getelementptr inbounds float, float* %reg_5, i32 0
  %v53 = load float, float* %v52
  %v54 = fmul nsz arcp contract afn float %v51, %v51
  %v55 = fadd nsz arcp contract afn float %v53, %v54
  store float %v55, float* %v52
  br label %loop_footer_7
loop_footer_7:
  br label %loop_latch_7
loop_exit_7:
  %v58 = getelementptr inbounds float, float* %reg_6, i32 0
  store float 0.0, float* %v58
  br label %loop_entry_9
loop_entry_9:
  br label %loop_latch_9
loop_latch_9:
  %v60 = phi i32 [ 0, %loop_entry_9 ], [ %v60phi, %loop_footer_9 ]
  %v60phi = add i32 %v60, 1
  %v60cmp = icmp ult i32 %v60, 2048
  br i1 %v60cmp, label %loop_body_9, label %loop_exit_9
loop_body_9:
  %v61 = getelementptr inbounds float, float* %data6, i32 %v60
  %v62 = load float, float* %v61
  %v63 = getelementptr inbounds float, float* %reg_6, i32 0
  %v64 = load float, float* %v63
  %v65 = fmul nsz arcp contract afn float %v62, %v62
  %v66 = fadd nsz arcp contract afn float %v64, %v65
  store float %v66, float* %v63
  br label %loop_footer_9
loop_footer_9:
  br label %loop_latch_9
loop_exit_9:
  %v69 = getelementptr inbounds float, float* %reg_7, i32 0
  store float 0.0, float* %v69
  br label %loop_entry_11
loop_entry_11:
  br label %loop_latch_11
loop_latch_11:
  %v71 = phi i32 [ 0, %loop_entry_11 ], [ %v71phi, %loop_footer_11 ]
  %v71phi = add i32 %v71, 1
  %v71cmp = icmp ult i32 %v71, 2048
  br i1 %v71cmp, label %loop_body_11, label %loop_exit_11
loop_body_11:
  %v72 = getelementptr inbounds float, float* %data7, i32 %v71
  %v73 = load float, float* %v72
  %v74 = getelementptr inbounds float, float* %reg_7, i32 0
  %v75 = load float, float* %v74
  %v76 = fmul nsz arcp contract afn float %v73, %v73
  %v77 = fadd nsz arcp contract afn float %v75, %v76
  store float %v77, float* %v74
  br label %loop_footer_11
loop_footer_11:
  br label %loop_latch_11
loop_exit_11:
  %v80 = getelementptr inbounds float, float* %reg_8, i32 0
  store float 0.0, float* %v80
  br label %loop_entry_13
loop_entry_13:
  br label %loop_latch_13
loop_latch_13:
  %v82 = phi i32 [ 0, %loop_entry_13 ], [ %v82phi, %loop_footer_13 ]
  %v82phi = add i32 %v82, 1
  %v82cmp = icmp ult i32 %v82, 4096
  br i1 %v82cmp, label %loop_body_13, label %loop_exit_13
loop_body_13:
  %v83 = getelementptr inbounds float, float* %data8, i32 %v82
  %v84 = load float, float* %v83
  %v85 = getelementptr inbounds float, float* %reg_8, i32 0
  %v86 = load float, float* %v85
  %v87 = fmul nsz arcp contract afn float %v84, %v84
  %v88 = fadd nsz arcp contract afn float %v86, %v87
  store float %v88, float* %v85
  br label %loop_footer_13
loop_footer_13:
  br label %loop_latch_13
loop_exit_13:
  %v91 = getelementptr inbounds float, float* %reg_9, i32 0
  store float 0.0, float* %v91
  br label %loop_entry_15
loop_entry_15:
  br label %loop_latch_15
loop_latch_15:
  %v93 = phi i32 [ 0, %loop_entry_15 ], [ %v93phi, %loop_footer_15 ]
  %v93phi = add i32 %v93, 1
  %v93cmp = icmp ult i32 %v93, 64
  br i1 %v93cmp, label %loop_body_15, label %loop_exit_15
loop_body_15:
  %v94 = getelementptr inbounds float, float* %data9, i32 %v93
  %v95 = load float, float* %v94
  %v96 = getelementptr inbounds float, float* %reg_9, i32 0
  %v97 = load float, float* %v96
  %v98 = fmul nsz arcp contract afn float %v95, %v95
  %v99 = fadd nsz arcp contract afn float %v97, %v98
  store float %v99, float* %v96
  br label %loop_footer_15
loop_footer_15:
  br label %loop_latch_15
loop_exit_15:
  %v102 = getelementptr inbounds float, float* %reg_10, i32 0
  store float 0.0, float* %v102
  br label %loop_entry_16
loop_entry_16:
  br label %loop_latch_16
loop_latch_16:
  %v104 = phi i32 [ 0, %loop_entry_16 ], [ %v104phi, %loop_footer_16 ]
  %v104phi = add i32 %v104, 1
  %v104cmp = icmp ult i32 %v104, 64
  br i1 %v104cmp, label %loop_body_16, label %loop_exit_16
loop_body_16:
  %v105 = getelementptr inbounds float, float* %data10, i32 %v104
  %v106 = load float, float* %v105
  %v107 = getelementptr inbounds float, float* %reg_10, i32 0
  %v108 = load float, float* %v107
  %v109 = fmul nsz arcp contract afn float %v106, %v106
  %v110 = fadd nsz arcp contract afn float %v108, %v109
  store float %v110, float* %v107
  br label %loop_footer_16
loop_footer_16:
  br label %loop_latch_16
loop_exit_16:
  %v113 = getelementptr inbounds float, float* %reg_11, i32 0
  store float 0.0, float* %v113
  br label %loop_entry_17
loop_entry_17:
  br label %loop_latch_17
loop_latch_17:
  %v115 = phi i32 [ 0, %loop_entry_17 ], [ %v115phi, %loop_footer_17 ]
  %v115phi = add i32 %v115, 1
  %v115cmp = icmp ult i32 %v115, 16512
  br i1 %v115cmp, label %loop_body_17, label %loop_exit_17
loop_body_17:
  %v116 = getelementptr inbounds float, float* %data11, i32 %v115
  %v117 = load float, float* %v116
  %v118 = getelementptr inbounds float, float* %reg_11, i32 0
  %v119 = load float, float* %v118
  %v120 = fmul nsz arcp contract afn float %v117, %v117
  %v121 = fadd nsz arcp contract afn float %v119, %v120
  store float %v121, float* %v118
  br label %loop_footer_17
loop_footer_17:
  br label %loop_latch_17
loop_exit_17:
  %v124 = getelementptr inbounds float, float* %reg_0, i32 0
  %v125 = load float, float* %v124
  %v126 = getelementptr inbounds float, float* %local_0, i32 %v0
  store float %v125, float* %v126
fence syncscope("workgroup") release
tail call void @llvm.amdgcn.s.barrier()
fence syncscope("workgroup") acquire

  %v129 = getelementptr inbounds float, float* %reg_1, i32 0
  store float 0.0, float* %v129
  br label %loop_entry_120
loop_entry_120:
  br label %loop_latch_120
loop_latch_120:
  %v131 = phi i32 [ 0, %loop_entry_120 ], [ %v131phi, %loop_footer_120 ]
  %v131phi = add i32 %v131, 1
  %v131cmp = icmp ult i32 %v131, 16
  br i1 %v131cmp, label %loop_body_120, label %loop_exit_120
loop_body_120:
  %v132 = getelementptr inbounds float, float* %local_0, i32 %v131
  %v133 = load float, float* %v132
  %v134 = getelementptr inbounds float, float* %reg_1, i32 0
  %v135 = load float, float* %v134
  %v136 = fadd nsz arcp contract afn float %v135, %v133
  store float %v136, float* %v134
  br label %loop_footer_120
loop_footer_120:
  br label %loop_latch_120
loop_exit_120:
  %v139 = getelementptr inbounds float, float* %reg_1, i32 0
  %v140 = load float, float* %v139
  %v141 = getelementptr inbounds float, float* %reg_2, i32 0
  %v142 = load float, float* %v141
  %v143 = getelementptr inbounds float, float* %reg_3, i32 0
  %v144 = load float, float* %v143
  %v145 = getelementptr inbounds float, float* %reg_4, i32 0
  %v146 = load float, float* %v145
  %v147 = getelementptr inbounds float, float* %reg_5, i32 0
  %v148 = load float, float* %v147
  %v149 = getelementptr inbounds float, float* %reg_6, i32 0
  %v150 = load float, float* %v149
  %v151 = getelementptr inbounds float, float* %reg_7, i32 0
  %v152 = load float, float* %v151
  %v153 = getelementptr inbounds float, float* %reg_8, i32 0
  %v154 = load float, float* %v153
  %v155 = getelementptr inbounds float, float* %reg_9, i32 0
  %v156 = load float, float* %v155
  %v157 = getelementptr inbounds float, float* %reg_10, i32 0
  %v158 = load float, float* %v157
  %v159 = getelementptr inbounds float, float* %reg_11, i32 0
  %v160 = load float, float* %v159
  %v161 = getelementptr inbounds float, float* %reg_12, i32 0
  store float 0.0, float* %v161
  br label %loop_entry_19
loop_entry_19:
  br label %loop_latch_19
loop_latch_19:
  %v163 = phi i32 [ 0, %loop_entry_19 ], [ %v163phi, %loop_footer_19 ]
  %v163phi = add i32 %v163, 1
  %v163cmp = icmp ult i32 %v163, 11
  br i1 %v163cmp, label %loop_body_19, label %loop_exit_19
loop_body_19:
  %v164 = getelementptr inbounds float, float* %reg_12, i32 0
  %v165 = load float, float* %v164
  %v166 = icmp ne i32 %v163, 0
  %v167 = icmp ne i32 %v163, 1
  %v168 = icmp ne i32 %v163, 2
  %v169 = icmp ne i32 %v163, 3
  %v170 = icmp ne i32 %v163, 4
  %v171 = icmp ne i32 %v163, 5
  %v172 = icmp ne i32 %v163, 6
  %v173 = icmp ne i32 %v163, 7
  %v174 = icmp ne i32 %v163, 8
  %v175 = icmp ne i32 %v163, 9
  %v176 = select i1 %v175, float %v140, float %v142
  %v177 = select i1 %v174, float %v176, float %v144
  %v178 = select i1 %v173, float %v177, float %v146
  %v179 = select i1 %v172, float %v178, float %v148
  %v180 = select i1 %v171, float %v179, float %v150
  %v181 = select i1 %v170, float %v180, float %v152
  %v182 = select i1 %v169, float %v181, float %v154
  %v183 = select i1 %v168, float %v182, float %v156
  %v184 = select i1 %v167, float %v183, float %v158
  %v185 = select i1 %v166, float %v184, float %v160
  %v186 = fadd nsz arcp contract afn float %v165, %v185
  store float %v186, float* %v164
  br label %loop_footer_19
loop_footer_19:
  br label %loop_latch_19
loop_exit_19:
  %v189 = getelementptr inbounds float, float* %reg_12, i32 0
  %v190 = load float, float* %v189
  %v191 = getelementptr inbounds float, float* %data0, i32 0
  %v192 = call float @llvm.sqrt.float(float %v190)
  %v193 = icmp eq i32 %v0, 0
  br i1 %v193, label %ifbody_v194, label %ifskip_v194
ifbody_v194:
  store float %v192, float* %v191
  br label %ifskip_v194
ifskip_v194:
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "amdgpu-flat-work-group-size"="1,16" "no-trapping-math"="true" }
